//! The shape of a Needle 2 model, from its container header, and what a session of it costs.
use alloc::vec::Vec;

use super::KvPrecision;
use crate::blocks::engram::EngramGeometry;
use crate::blocks::stack::LayerPlan;
use crate::container::V2Header;
use crate::{Error, Result};

/// Header geometry in the units the forward pass uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// Rows of the tied embedding: the valid ids and the length of a logits row.
    pub vocab: usize,
    pub d_model: usize,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub num_layers: usize,
    /// One width for query, key and value heads.
    pub head_dim: usize,
    pub max_seq_len: usize,
    pub hada_n: usize,
    pub mhc_lanes: usize,
    /// The attention window the model runs with: keys a token sees, itself included
    /// (0 = every earlier position).
    pub kv_window: usize,
    /// KV width the model was post-trained for (8 = no KV rounding in Needle 2).
    pub kv_bits: u32,
    /// The Engram sites' shared geometry (none without sites).
    pub(crate) engram: EngramGeometry,
    /// The layer of each Engram site, in site order.
    pub engram_sites: Vec<usize>,
    pub rope_theta: f32,
}

impl Geometry {
    /// Reads the geometry off a header. The container has range-checked every field; what is
    /// checked again here is what the forward pass divides by or indexes with.
    pub fn from_header(h: &V2Header) -> Result<Self> {
        let us = |v: u32| v as usize;
        let g = Geometry {
            vocab: us(h.vocab),
            d_model: us(h.d_model),
            num_heads: us(h.num_heads),
            num_kv_heads: us(h.num_kv_heads),
            num_layers: us(h.num_layers),
            head_dim: us(h.head_dim),
            max_seq_len: us(h.max_seq_len),
            hada_n: us(h.hada_n),
            mhc_lanes: us(h.mhc_lanes),
            kv_window: us(h.kv_window),
            kv_bits: h.kv_bits,
            engram: EngramGeometry::from_header(&h.engram, h.d_model, 0),
            engram_sites: h.engram.sites().iter().map(|&s| us(s)).collect(),
            rope_theta: h.rope_theta,
        };
        g.check()?;
        Ok(g)
    }

    fn check(&self) -> Result<()> {
        let bad = |field, value: usize, reason| {
            Err(Error::BadHeader { field, value: value as u64, reason })
        };
        if self.vocab == 0
            || self.d_model == 0
            || self.mhc_lanes == 0
            || self.num_layers == 0
            || self.num_layers > 64
        {
            return bad(
                "d_model",
                self.d_model,
                "vocab, d_model, mhc_lanes and num_layers (<= 64) must be non-zero",
            );
        }
        if self.num_kv_heads == 0 || !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return bad("num_kv_heads", self.num_kv_heads, "must divide num_heads");
        }
        if self.head_dim == 0 || !self.head_dim.is_multiple_of(2) {
            return bad("head_dim", self.head_dim, "must be even and non-zero");
        }
        if self.hada_n < self.d_model || !self.hada_n.is_power_of_two() {
            return bad("hada_n", self.hada_n, "must be d_model rounded up to a power of two");
        }
        if self.max_seq_len == 0 {
            return bad("max_seq_len", 0, "must be non-zero");
        }
        self.engram.check(&self.engram_sites, self.num_layers)
    }

    /// Positions each layer's KV ring holds for attention window `window` (0 = full causal)
    /// in a session of `session_len` tokens.
    pub fn kv_slots(&self, window: usize, session_len: usize) -> usize {
        if window == 0 {
            session_len
        } else {
            window.min(session_len)
        }
    }

    /// Bytes one cached position costs in one layer: keys and values, plus, for int8, one f32
    /// scale per (position, kv head) for each of them.
    pub fn kv_bytes_per_slot(&self, kv: KvPrecision) -> usize {
        let values = 2 * self.num_kv_heads * self.head_dim;
        kv.slot_bytes(values, self.num_kv_heads)
    }

    /// KV-cache bytes of a session of `session_len` tokens with attention window `window`.
    pub fn kv_bytes(&self, window: usize, session_len: usize, kv: KvPrecision) -> usize {
        self.num_layers * self.kv_slots(window, session_len) * self.kv_bytes_per_slot(kv)
    }

    /// Every layer with attention window `window`, its ring holding `slots` positions.
    pub(crate) fn plan(&self, window: usize, slots: usize) -> Vec<LayerPlan> {
        (0..self.num_layers)
            .map(|layer| LayerPlan { layer, window: (window != 0).then_some(window), slots })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// upstream 2.0.15's `needle` preset (d_model 768, 27 layers, 12/6 heads of 64) with the
    /// window its CLI exports (`effective_kv_window`: 480 positions).
    fn preset() -> Geometry {
        Geometry {
            vocab: 8192,
            d_model: 768,
            num_heads: 12,
            num_kv_heads: 6,
            num_layers: 27,
            head_dim: 64,
            max_seq_len: 2048,
            hada_n: 1024,
            mhc_lanes: 4,
            kv_window: 480,
            kv_bits: 8,
            engram: EngramGeometry {
                d_model: 768,
                slots: 8192,
                sub_dim: 128,
                tables: 6,
                conv_taps: 4,
                conv_dilation: 3,
                seed_heads: 0,
                orders: alloc::vec![2, 3],
            },
            engram_sites: alloc::vec![2, 15],
            rope_theta: 100_000.0,
        }
    }

    #[test]
    fn a_windowed_ring_stops_at_the_window_and_a_full_causal_one_grows_with_the_session() {
        let g = preset();
        assert_eq!(g.kv_slots(480, 2048), 480);
        assert_eq!(g.kv_slots(480, 300), 300);
        assert_eq!(g.kv_slots(0, 2048), 2048);
        // per position and layer: 6 kv heads x 64 for keys and again for values
        assert_eq!(g.kv_bytes_per_slot(KvPrecision::F32), 3072);
        assert_eq!(g.kv_bytes_per_slot(KvPrecision::Int8), 768 + 48);
        assert_eq!(g.kv_bytes(480, 2048, KvPrecision::F32), 27 * 480 * 3072);
        assert_eq!(g.kv_bytes(480, 2048, KvPrecision::Int8), 27 * 480 * 816);
    }
}
