//! The weights as the GPU holds them: the container's bytes as they are (CQ codes and FP16
//! norms are read in place by the shaders, never expanded) and one buffer of the float tensors
//! the CPU model widened at load (gains, taps, biases, code tables, MLP factors).
use std::vec::Vec;

use crate::kernels::CqMatrix;
use crate::{Error, Result};

/// A CQ matrix as the kernels address it: words 0..8 of a matmul or gather parameter slot.
#[derive(Clone, Copy)]
pub(crate) struct Cq {
    pub(crate) words: [u32; 8],
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) cols_padded: usize,
    pub(crate) group: usize,
}

pub(crate) struct Weights<'a> {
    /// The container bytes the model views.
    pub(crate) bytes: &'a [u8],
    pub(crate) floats: Vec<f32>,
}

impl<'a> Weights<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, floats: Vec::new() }
    }

    /// Appends `v` to the float buffer; its offset.
    pub(crate) fn floats(&mut self, v: &[f32]) -> u32 {
        let at = self.floats.len() as u32;
        self.floats.extend_from_slice(v);
        at
    }

    /// Byte offset of `part` inside the container.
    fn offset(&self, part: &[u8]) -> Result<usize> {
        let (base, p) = (self.bytes.as_ptr() as usize, part.as_ptr() as usize);
        p.checked_sub(base)
            .filter(|o| o + part.len() <= self.bytes.len())
            .ok_or(Error::Unsupported { what: "a GPU matrix must lie in the container bytes" })
    }

    /// `m`'s codes and norms in place, and its code table.
    pub(crate) fn cq(&mut self, m: &CqMatrix<'_>) -> Result<Cq> {
        let codes = self.offset(m.packed())?;
        let norms = self.offset(m.norms())?;
        let too_big = Error::GpuUnavailable {
            reason: "container too large to address codes by bit in 32 bits".into(),
        };
        let base_bit = u32::try_from(codes * 8).map_err(|_| too_big.clone())?;
        if !norms.is_multiple_of(2) {
            return Err(Error::Unsupported { what: "CQ norms at an odd byte offset" });
        }
        let table = self.floats(m.table());
        Ok(Cq {
            words: [
                base_bit,
                (m.row_bytes() * 8) as u32,
                m.width().code_bits() as u32,
                (norms / 2) as u32,
                m.groups_per_row() as u32,
                m.group() as u32,
                m.rows() as u32,
                table,
            ],
            rows: m.rows(),
            cols: m.cols(),
            cols_padded: m.cols_padded(),
            group: m.group(),
        })
    }

    /// The container bytes padded to whole words.
    pub(crate) fn code_words(&self) -> Vec<u8> {
        let mut v = self.bytes.to_vec();
        v.resize(self.bytes.len().next_multiple_of(4), 0);
        v
    }
}
