//! The Needle 3 header: 48 little-endian u32 then an f32 (`<48If`, 196 bytes): the [`Core`]
//! from word 1 with Needle 3's `out_vocab` (word 6) and `v_head_dim` (word 12) among it, its
//! local/global layers and conv taps from word 16, the Engram fields from word 20.
use alloc::vec::Vec;

use super::bytes::Le;
use super::header::{self, bad, Core, EngramFields, Field, Layout};
use crate::Result;

pub const V3_TAG: u32 = 0x05E1_2A84;
pub const V3_HEADER_LEN: u64 = 196;

const LAYOUT: Layout = Layout::new(V3_HEADER_LEN, &[6, 12], (20, 26), 48, "qk_head_dim");

/// Every Needle 3 header field: the [`Core`] (it reads as one), Needle 3's own, and the Engram
/// ones (but the seed stride) in [`EngramFields`]. The core's `kv_window` is the attention
/// window the model was trained for (0 = size it from the KV budget).
#[derive(Clone, Debug, PartialEq)]
pub struct V3Header {
    pub core: Core,
    /// Rows of the tied embedding used as the output head (0 = all `vocab`).
    pub out_vocab: u32,
    pub v_head_dim: u32,
    /// Local attention width of non-global layers (0 = every layer is global).
    pub sliding_window: u32,
    /// Bit `i` set = layer `i` attends globally (bits past `num_layers` cleared on read).
    pub global_layers: u64,
    /// Causal depthwise conv width on q, k, v (0 = none).
    pub qkv_conv_taps: u32,
    pub engram_seed_heads: u32,
    pub engram: EngramFields<16>,
}

header::reads_as_core!(V3Header);

impl V3Header {
    /// Reads and range-checks the header (the tag has already been matched).
    pub(crate) fn read(input: &[u8]) -> Result<Self> {
        let le = Le::window(input, 0, LAYOUT.len, "header")?;
        let u = |i: usize| le.u32(4 * i);
        let mut h = V3Header {
            core: Core::read(&le, &LAYOUT)?,
            out_vocab: u(6)?,
            v_head_dim: u(12)?,
            sliding_window: u(16)?,
            global_layers: u64::from(u(17)?) | u64::from(u(18)?) << 32,
            qkv_conv_taps: u(19)?,
            engram_seed_heads: u(25)?,
            engram: EngramFields::read(&le, LAYOUT.engram)?,
        };
        h.check()?;
        // Bits past the stack name no layer; upstream's reader drops them too.
        if h.num_layers < 64 {
            h.global_layers &= (1u64 << h.num_layers) - 1;
        }
        Ok(h)
    }

    fn check(&self) -> Result<()> {
        self.core.check()?;
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
    pub fn fields(&self) -> Vec<(&'static str, Field<'_>)> {
        let int = |v: u32| Field::Int(v.into());
        let own = [
            (6, "out_vocab", int(self.out_vocab)),
            (12, "v_head_dim", int(self.v_head_dim)),
            (16, "sliding_window", int(self.sliding_window)),
            (17, "global_layers", Field::LayerMask(self.global_layers)),
            (19, "qkv_conv_taps", int(self.qkv_conv_taps)),
            (25, "engram_seed_heads", int(self.engram_seed_heads)),
        ];
        let engram = self.engram.listed(LAYOUT.engram);
        header::listing(self.core.listed(&LAYOUT).chain(own).chain(engram))
    }
}
