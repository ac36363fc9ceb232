//! The shape of a Needle 3 model, from its container header, and what a session of it costs.
use alloc::vec::Vec;

use super::KvPrecision;
use crate::blocks::engram::EngramGeometry;
use crate::blocks::stack::LayerPlan;
use crate::container::V3Header;
use crate::{Error, Result};

/// Header geometry in the units the forward pass uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// Rows of the embedding: every id below this is a valid input.
    pub vocab: usize,
    /// Rows of the tied output head: the length of a logits row.
    pub logits_vocab: usize,
    pub d_model: usize,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub num_layers: usize,
    pub qk_head_dim: usize,
    pub v_head_dim: usize,
    pub max_seq_len: usize,
    pub hada_n: usize,
    pub mhc_lanes: usize,
    /// Keys a local layer sees (itself included); 0 = every layer is global.
    pub sliding_window: usize,
    pub global_layers: u64,
    /// Causal depthwise conv width on q, k, v (0 = none).
    pub qkv_conv_taps: usize,
    /// The Engram sites' shared geometry (none without sites).
    pub(crate) engram: EngramGeometry,
    /// The layer of each Engram site, in site order.
    pub engram_sites: Vec<usize>,
    pub rope_theta: f32,
    /// KV width the model was post-trained for (8 = int8).
    pub kv_bits: u32,
}

impl Geometry {
    /// Reads the geometry off a header. The container has range-checked every field; what is
    /// checked again here is what the forward pass divides by or indexes with.
    pub fn from_header(h: &V3Header) -> Result<Self> {
        let us = |v: u32| v as usize;
        let g = Geometry {
            vocab: us(h.vocab),
            logits_vocab: us(h.logits_vocab()),
            d_model: us(h.d_model),
            num_heads: us(h.num_heads),
            num_kv_heads: us(h.num_kv_heads),
            num_layers: us(h.num_layers),
            qk_head_dim: us(h.qk_head_dim),
            v_head_dim: us(h.v_head_dim),
            max_seq_len: us(h.max_seq_len),
            hada_n: us(h.hada_n),
            mhc_lanes: us(h.mhc_lanes),
            sliding_window: us(h.sliding_window),
            global_layers: h.global_layers,
            qkv_conv_taps: us(h.qkv_conv_taps),
            engram: EngramGeometry::from_header(&h.engram, h.d_model, h.engram_seed_heads),
            engram_sites: h.engram.sites().iter().map(|&s| us(s)).collect(),
            rope_theta: h.rope_theta,
            kv_bits: h.kv_bits,
        };
        g.check()?;
        Ok(g)
    }

    fn check(&self) -> Result<()> {
        let bad = |field, value: usize, reason| {
            Err(Error::BadHeader { field, value: value as u64, reason })
        };
        if self.vocab == 0 || self.logits_vocab == 0 || self.logits_vocab > self.vocab {
            return bad("out_vocab", self.logits_vocab, "must be 1 to vocab_size");
        }
        if self.d_model == 0 || self.mhc_lanes == 0 || self.num_layers == 0 || self.num_layers > 64
        {
            return bad(
                "d_model",
                self.d_model,
                "d_model, mhc_lanes and num_layers (<= 64) must be non-zero",
            );
        }
        if self.num_kv_heads == 0 || !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return bad("num_kv_heads", self.num_kv_heads, "must divide num_heads");
        }
        if self.qk_head_dim == 0 || !self.qk_head_dim.is_multiple_of(2) || self.v_head_dim == 0 {
            return bad("qk_head_dim", self.qk_head_dim, "head widths must be non-zero, qk even");
        }
        if self.hada_n < self.d_model || !self.hada_n.is_power_of_two() {
            return bad("hada_n", self.hada_n, "must be d_model rounded up to a power of two");
        }
        if self.max_seq_len == 0 {
            return bad("max_seq_len", 0, "must be non-zero");
        }
        self.engram.check(&self.engram_sites, self.num_layers)
    }

    /// Whether `layer` attends over the whole context.
    pub fn is_global(&self, layer: usize) -> bool {
        self.sliding_window == 0 || (layer < 64 && self.global_layers >> layer & 1 == 1)
    }

    /// Positions a layer's KV ring holds in a session of `session_len` tokens: local layers
    /// stop at their window (and wrap), global layers hold the whole session.
    pub fn kv_slots(&self, layer: usize, session_len: usize) -> usize {
        if self.is_global(layer) {
            session_len
        } else {
            session_len.min(self.sliding_window)
        }
    }

    /// Bytes one cached position costs in one layer: keys and values, plus, for int8, one f32
    /// scale per (position, kv head) for each of them.
    pub fn kv_bytes_per_slot(&self, kv: KvPrecision) -> usize {
        let values = self.num_kv_heads * (self.qk_head_dim + self.v_head_dim);
        kv.slot_bytes(values, self.num_kv_heads)
    }

    /// KV-cache bytes of a session of `session_len` tokens over `layers`.
    pub fn kv_bytes(&self, layers: &[usize], session_len: usize, kv: KvPrecision) -> usize {
        let slots: usize = layers.iter().map(|&l| self.kv_slots(l, session_len)).sum();
        slots * self.kv_bytes_per_slot(kv)
    }

    /// How each of `layers` runs in a session of `session_len` tokens.
    pub(crate) fn plan(&self, layers: &[usize], session_len: usize) -> Vec<LayerPlan> {
        let window = |l| (!self.is_global(l)).then_some(self.sliding_window);
        layers
            .iter()
            .map(|&l| LayerPlan {
                layer: l,
                window: window(l),
                slots: self.kv_slots(l, session_len),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published needle3.cact's geometry.
    fn shipped() -> Geometry {
        Geometry {
            vocab: 16384,
            logits_vocab: 16384,
            d_model: 768,
            num_heads: 12,
            num_kv_heads: 2,
            num_layers: 20,
            qk_head_dim: 48,
            v_head_dim: 64,
            max_seq_len: 4096,
            hada_n: 1024,
            mhc_lanes: 4,
            sliding_window: 1024,
            global_layers: (1 << 4) | (1 << 9) | (1 << 14) | (1 << 19),
            qkv_conv_taps: 3,
            engram: EngramGeometry {
                d_model: 768,
                slots: 18432,
                sub_dim: 128,
                tables: 6,
                conv_taps: 4,
                conv_dilation: 3,
                seed_heads: 0,
                orders: alloc::vec![2, 3],
            },
            engram_sites: alloc::vec![3, 7, 11, 15, 19],
            rope_theta: 100_000.0,
            kv_bits: 8,
        }
    }

    #[test]
    fn a_512_token_session_at_the_shipped_geometry_holds_9_2_mb_of_f32_kv_or_2_5_mb_of_int8() {
        let g = shipped();
        let all: Vec<usize> = (0..20).collect();
        // per position and layer: 2 kv heads x (48 + 64) values
        assert_eq!(g.kv_bytes_per_slot(KvPrecision::F32), 896);
        assert_eq!(g.kv_bytes_per_slot(KvPrecision::Int8), 224 + 16);
        let f32_bytes = g.kv_bytes(&all, 512, KvPrecision::F32);
        let int8_bytes = g.kv_bytes(&all, 512, KvPrecision::Int8);
        assert_eq!(f32_bytes, 20 * 512 * 896);
        assert_eq!(int8_bytes, 20 * 512 * 240);
        std::eprintln!("shipped geometry, 512 tokens: KV f32 {f32_bytes} B, int8 {int8_bytes} B");
    }

    #[test]
    fn local_layers_stop_at_their_window_and_global_layers_grow_with_the_session() {
        let g = shipped();
        assert_eq!(g.kv_slots(0, 4096), 1024);
        assert_eq!(g.kv_slots(4, 4096), 4096);
        assert_eq!(g.kv_slots(0, 300), 300);
        // A full 4096-token context: 16 local layers at 1024 slots, 4 global at 4096.
        let all: Vec<usize> = (0..20).collect();
        assert_eq!(g.kv_bytes(&all, 4096, KvPrecision::Int8), (16 * 1024 + 4 * 4096) * 240);
    }
}
