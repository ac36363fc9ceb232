//! The Needle 2 header: 29 little-endian u32 then an f32 (`<29If`, 120 bytes): the [`Core`]
//! from word 1, the Engram fields from word 14.
use alloc::vec::Vec;

use super::bytes::Le;
use super::header::{self, Core, EngramFields, Field, Layout};
use crate::Result;

pub const V2_TAG: u32 = 0x05E1_2A83;
pub const V2_HEADER_LEN: u64 = 120;

const LAYOUT: Layout = Layout::new(V2_HEADER_LEN, &[], (14, 19), 29, "head_dim");

/// Every Needle 2 header field: the [`Core`] (it reads as one) and the Engram ones. Query, key
/// and value heads share one `head_dim` (the core's `qk_head_dim`); the core's `kv_window` is
/// the attention window a runtime applies (0 = full causal).
#[derive(Clone, Debug, PartialEq)]
pub struct V2Header {
    pub core: Core,
    pub engram: EngramFields<4>,
}

header::reads_as_core!(V2Header);

impl V2Header {
    /// Reads and range-checks the header (the tag has already been matched).
    pub(crate) fn read(input: &[u8]) -> Result<Self> {
        let le = Le::window(input, 0, LAYOUT.len, "header")?;
        let h = V2Header {
            core: Core::read(&le, &LAYOUT)?,
            engram: EngramFields::read(&le, LAYOUT.engram)?,
        };
        h.core.check()?;
        h.engram.check(h.d_model, h.num_layers)?;
        Ok(h)
    }

    /// Every field under upstream's `read_export` name, in header order.
    pub fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
        header::listing(self.core.listed(&LAYOUT).chain(self.engram.listed(LAYOUT.engram)))
    }
}
