//! The weights as the GPU holds them: the CQ matrices' codes and FP16 norms as the container
//! stores them (read in place by the shaders, never expanded), copied into one buffer without
//! the container's other bytes (the float tensors, the tokenizer, the header), and one buffer of
//! the float tensors the CPU model widened at load (gains, taps, biases, code tables, MLP
//! factors).
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
    /// The codes buffer: each span of the container a matrix reads, once, word-aligned.
    codes: Vec<u8>,
    /// `(container offset, length, offset in codes)` of each span copied.
    spans: Vec<(usize, usize, usize)>,
}

impl<'a> Weights<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, floats: Vec::new(), codes: Vec::new(), spans: Vec::new() }
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

    /// Where `part` of the container lies in the codes buffer: a span already copied that
    /// holds it (the tied head reads the embedding's first rows), else appended at a word.
    fn place(&mut self, part: &[u8]) -> Result<usize> {
        let at = self.offset(part)?;
        let end = at + part.len();
        if let Some(&(o, _, c)) = self.spans.iter().find(|&&(o, n, _)| o <= at && end <= o + n) {
            return Ok(c + (at - o));
        }
        let c = self.codes.len();
        self.codes.extend_from_slice(part);
        self.codes.resize(self.codes.len().next_multiple_of(4), 0);
        self.spans.push((at, part.len(), c));
        Ok(c)
    }

    /// `m`'s codes and norms (copied into the codes buffer once), and its code table.
    pub(crate) fn cq(&mut self, m: &CqMatrix<'_>) -> Result<Cq> {
        let codes = self.place(m.packed())?;
        let norms = self.place(m.norms())?;
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

    /// The codes buffer (whole words; one word where no matrix was placed: a buffer is never
    /// empty).
    pub(crate) fn code_words(&self) -> &[u8] {
        if self.codes.is_empty() {
            &[0; 4]
        } else {
            &self.codes
        }
    }
}
