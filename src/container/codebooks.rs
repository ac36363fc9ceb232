//! The shared CQ codebooks that follow the header: `cb2[4] | cb3[8] | cb4[16]` as f32.
//!
//! Upstream stores the Lloyd-Max levels already divided by sqrt(group), for the one group size
//! it exported with; 1-bit and ternary levels are analytic and not stored.
use super::bytes::Le;
use crate::{Error, Result};

/// Number of f32 values in the codebook block (`codebook_len`).
pub const CODEBOOK_LEN: u32 = 4 + 8 + 16;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Codebooks {
    pub cb2: [f32; 4],
    pub cb3: [f32; 8],
    pub cb4: [f32; 16],
}

impl Codebooks {
    /// Reads the block at `start`, after the header has checked `codebook_len == CODEBOOK_LEN`.
    pub(crate) fn read(input: &[u8], start: u64) -> Result<Self> {
        let le = Le::window(input, start, u64::from(CODEBOOK_LEN) * 4, "codebook")?;
        let mut all = [0f32; CODEBOOK_LEN as usize];
        for (i, v) in all.iter_mut().enumerate() {
            *v = le.f32(4 * i)?;
            if !v.is_finite() {
                return Err(Error::BadHeader {
                    field: "codebook",
                    value: i as u64,
                    reason: "codebook entry is not finite",
                });
            }
        }
        let mut cbs = Codebooks { cb2: [0.0; 4], cb3: [0.0; 8], cb4: [0.0; 16] };
        cbs.cb2.copy_from_slice(&all[..4]);
        cbs.cb3.copy_from_slice(&all[4..12]);
        cbs.cb4.copy_from_slice(&all[12..]);
        Ok(cbs)
    }

    /// All levels in file order (cb2, cb3, cb4).
    pub fn iter(&self) -> impl Iterator<Item = f32> + '_ {
        self.cb2.iter().chain(&self.cb3).chain(&self.cb4).copied()
    }
}
