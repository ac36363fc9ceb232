//! The Needle 3 header: 48 little-endian u32 then an f32 (`<48If`, 196 bytes).
use super::bytes::Le;
use super::header::{self, bad, EngramFields, Field};
use crate::Result;

pub const V3_TAG: u32 = 0x05E1_2A84;
pub const V3_HEADER_LEN: u64 = 196;

/// Every Needle 3 header field, by name (the Engram ones, but the seed stride, in
/// [`EngramFields`]).
#[derive(Clone, Debug, PartialEq)]
pub struct V3Header {
    pub num_tensors: u32,
    pub codebook_len: u32,
    /// Attention window the model was trained for (0 = size it from the KV budget).
    pub kv_window: u32,
    /// KV-cache width the model was post-trained for (8 = int8).
    pub kv_bits: u32,
    pub vocab: u32,
    /// Rows of the tied embedding used as the output head (0 = all `vocab`).
    pub out_vocab: u32,
    pub d_model: u32,
    pub num_heads: u32,
    pub num_kv_heads: u32,
    pub num_layers: u32,
    pub qk_head_dim: u32,
    pub v_head_dim: u32,
    pub max_seq_len: u32,
    pub hada_n: u32,
    pub mhc_lanes: u32,
    /// Local attention width of non-global layers (0 = every layer is global).
    pub sliding_window: u32,
    /// Bit `i` set = layer `i` attends globally (bits past `num_layers` cleared on read).
    pub global_layers: u64,
    /// Causal depthwise conv width on q, k, v (0 = none).
    pub qkv_conv_taps: u32,
    pub engram_seed_heads: u32,
    pub engram: EngramFields<16>,
    pub rope_theta: f32,
}

header::shared_core!(V3Header, qk_head_dim);

impl V3Header {
    /// Reads and range-checks the header (the tag has already been matched).
    pub(crate) fn read(input: &[u8]) -> Result<Self> {
        let le = Le::window(input, 0, V3_HEADER_LEN, "header")?;
        let u = |i: usize| le.u32(4 * i);
        let mut h = V3Header {
            num_tensors: u(1)?,
            codebook_len: u(2)?,
            kv_window: u(3)?,
            kv_bits: u(4)?,
            vocab: u(5)?,
            out_vocab: u(6)?,
            d_model: u(7)?,
            num_heads: u(8)?,
            num_kv_heads: u(9)?,
            num_layers: u(10)?,
            qk_head_dim: u(11)?,
            v_head_dim: u(12)?,
            max_seq_len: u(13)?,
            hada_n: u(14)?,
            mhc_lanes: u(15)?,
            sliding_window: u(16)?,
            global_layers: u64::from(u(17)?) | u64::from(u(18)?) << 32,
            qkv_conv_taps: u(19)?,
            engram_seed_heads: u(25)?,
            engram: EngramFields::read(&le, 20, 26)?,
            rope_theta: le.f32(4 * 48)?,
        };
        h.check()?;
        // Bits past the stack name no layer; upstream's reader drops them too.
        if h.num_layers < 64 {
            h.global_layers &= (1u64 << h.num_layers) - 1;
        }
        Ok(h)
    }

    fn check(&self) -> Result<()> {
        self.core().check()?;
        header::nonzero("v_head_dim", self.v_head_dim)?;
        if self.out_vocab > self.vocab {
            return Err(bad("out_vocab", self.out_vocab.into(), "exceeds vocab_size"));
        }
        self.engram.check(self.d_model, self.num_layers)
    }

    /// Whether `layer` attends over the whole context (always, without a sliding window).
    pub fn is_global(&self, layer: u32) -> bool {
        self.sliding_window == 0 || (layer < 64 && self.global_layers >> layer & 1 == 1)
    }

    /// Rows of the tied embedding that produce logits.
    pub fn logits_vocab(&self) -> u32 {
        if self.out_vocab == 0 {
            self.vocab
        } else {
            self.out_vocab
        }
    }

    /// Every field under upstream's `read_export` name, in header order.
    pub fn fields(&self) -> [(&'static str, Field<'_>); 27] {
        use Field::*;
        let int = |v: u32| Int(v.into());
        [
            ("num_tensors", int(self.num_tensors)),
            ("codebook_len", int(self.codebook_len)),
            ("kv_window", int(self.kv_window)),
            ("kv_bits", int(self.kv_bits)),
            ("vocab_size", int(self.vocab)),
            ("out_vocab", int(self.out_vocab)),
            ("d_model", int(self.d_model)),
            ("num_heads", int(self.num_heads)),
            ("num_kv_heads", int(self.num_kv_heads)),
            ("num_layers", int(self.num_layers)),
            ("qk_head_dim", int(self.qk_head_dim)),
            ("v_head_dim", int(self.v_head_dim)),
            ("max_seq_len", int(self.max_seq_len)),
            ("hada_n", int(self.hada_n)),
            ("mhc_lanes", int(self.mhc_lanes)),
            ("sliding_window", int(self.sliding_window)),
            ("global_layers", LayerMask(self.global_layers)),
            ("qkv_conv_taps", int(self.qkv_conv_taps)),
            ("engram_slots", int(self.engram.slots)),
            ("engram_sub_dim", int(self.engram.sub_dim)),
            ("num_engram_tables", int(self.engram.num_tables)),
            ("engram_conv_taps", int(self.engram.conv_taps)),
            ("engram_conv_dilation", int(self.engram.conv_dilation)),
            ("engram_seed_heads", int(self.engram_seed_heads)),
            ("engram_orders", List(self.engram.orders())),
            ("engram_layers", List(self.engram.sites())),
            ("rope_theta", Real(self.rope_theta)),
        ]
    }
}
