//! The Needle 2 header: 29 little-endian u32 then an f32 (`<29If`, 120 bytes).
use super::bytes::Le;
use super::header::{self, EngramFields, Field};
use crate::Result;

pub const V2_TAG: u32 = 0x05E1_2A83;
pub const V2_HEADER_LEN: u64 = 120;

/// Every Needle 2 header field, by name (the Engram ones in [`EngramFields`]). Query, key and
/// value heads share one `head_dim`.
#[derive(Clone, Debug, PartialEq)]
pub struct V2Header {
    pub num_tensors: u32,
    pub codebook_len: u32,
    /// The attention window a runtime applies (0 = full causal).
    pub kv_window: u32,
    /// KV-cache width the model was post-trained for (8 = no KV quantisation in v2).
    pub kv_bits: u32,
    pub vocab: u32,
    pub d_model: u32,
    pub num_heads: u32,
    pub num_kv_heads: u32,
    pub num_layers: u32,
    pub head_dim: u32,
    pub max_seq_len: u32,
    pub hada_n: u32,
    pub mhc_lanes: u32,
    pub engram: EngramFields<4>,
    pub rope_theta: f32,
}

header::shared_core!(V2Header, head_dim);

impl V2Header {
    /// Reads and range-checks the header (the tag has already been matched).
    pub(crate) fn read(input: &[u8]) -> Result<Self> {
        let le = Le::window(input, 0, V2_HEADER_LEN, "header")?;
        let u = |i: usize| le.u32(4 * i);
        let h = V2Header {
            num_tensors: u(1)?,
            codebook_len: u(2)?,
            kv_window: u(3)?,
            kv_bits: u(4)?,
            vocab: u(5)?,
            d_model: u(6)?,
            num_heads: u(7)?,
            num_kv_heads: u(8)?,
            num_layers: u(9)?,
            head_dim: u(10)?,
            max_seq_len: u(11)?,
            hada_n: u(12)?,
            mhc_lanes: u(13)?,
            engram: EngramFields::read(&le, 14, 19)?,
            rope_theta: le.f32(4 * 29)?,
        };
        h.check()?;
        Ok(h)
    }

    fn check(&self) -> Result<()> {
        self.core().check()?;
        self.engram.check(self.d_model, self.num_layers)
    }

    /// Every field under upstream's `read_export` name, in header order.
    pub fn fields(&self) -> [(&'static str, Field<'_>); 21] {
        use Field::*;
        let int = |v: u32| Int(v.into());
        [
            ("num_tensors", int(self.num_tensors)),
            ("codebook_len", int(self.codebook_len)),
            ("kv_window", int(self.kv_window)),
            ("kv_bits", int(self.kv_bits)),
            ("vocab_size", int(self.vocab)),
            ("d_model", int(self.d_model)),
            ("num_heads", int(self.num_heads)),
            ("num_kv_heads", int(self.num_kv_heads)),
            ("num_layers", int(self.num_layers)),
            ("head_dim", int(self.head_dim)),
            ("max_seq_len", int(self.max_seq_len)),
            ("hada_n", int(self.hada_n)),
            ("mhc_lanes", int(self.mhc_lanes)),
            ("engram_slots", int(self.engram.slots)),
            ("engram_sub_dim", int(self.engram.sub_dim)),
            ("num_engram_tables", int(self.engram.num_tables)),
            ("engram_conv_taps", int(self.engram.conv_taps)),
            ("engram_conv_dilation", int(self.engram.conv_dilation)),
            ("engram_orders", List(self.engram.orders())),
            ("engram_layers", List(self.engram.sites())),
            ("rope_theta", Real(self.rope_theta)),
        ]
    }
}
