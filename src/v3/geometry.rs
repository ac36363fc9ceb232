//! The shape of a Needle 3 model, from its container header, and what a session of it costs.
use alloc::vec::Vec;

use super::KvPrecision;
use crate::blocks::geometry;
use crate::blocks::stack::LayerPlan;
use crate::container::V3Header;
use crate::Result;

/// Needle 3's attention: local layers over a sliding window, global ones over the whole
/// context, and causal conv taps on q, k, v.
#[derive(Clone, Debug, PartialEq)]
pub struct Layers {
    /// Keys a local layer sees (itself included); 0 = every layer is global.
    pub sliding_window: usize,
    pub global_layers: u64,
    /// Causal depthwise conv width on q, k, v (0 = none).
    pub qkv_conv_taps: usize,
}

/// Header geometry in the units the forward pass uses.
pub type Geometry = geometry::Geometry<Layers>;

impl Geometry {
    /// Reads the geometry off a header.
    pub fn from_header(h: &V3Header) -> Result<Self> {
        let own = (h.v_head_dim, h.logits_vocab(), h.engram_seed_heads);
        let layers = Layers {
            sliding_window: h.sliding_window as usize,
            global_layers: h.global_layers,
            qkv_conv_taps: h.qkv_conv_taps as usize,
        };
        Self::from_core(&h.core, &h.engram, own, layers)
    }

    /// Whether `layer` attends over the whole context.
    pub fn is_global(&self, layer: usize) -> bool {
        let a = &self.attention;
        a.sliding_window == 0 || (layer < 64 && a.global_layers >> layer & 1 == 1)
    }

    /// Positions a layer's KV ring holds in a session of `session_len` tokens: local layers
    /// stop at their window (and wrap), global layers hold the whole session.
    pub fn kv_slots(&self, layer: usize, session_len: usize) -> usize {
        if self.is_global(layer) {
            session_len
        } else {
            session_len.min(self.attention.sliding_window)
        }
    }

    /// KV-cache bytes of a session of `session_len` tokens over `layers`.
    pub fn kv_bytes(&self, layers: &[usize], session_len: usize, kv: KvPrecision) -> usize {
        let slots: usize = layers.iter().map(|&l| self.kv_slots(l, session_len)).sum();
        slots * self.kv_bytes_per_slot(kv)
    }

    /// How each of `layers` runs in a session of `session_len` tokens.
    pub(crate) fn plan(&self, layers: &[usize], session_len: usize) -> Vec<LayerPlan> {
        let window = |l| (!self.is_global(l)).then_some(self.attention.sliding_window);
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
    use crate::blocks::geometry::test_util::family;

    /// The published needle3.cact's geometry.
    fn shipped() -> Geometry {
        let layers = Layers {
            sliding_window: 1024,
            global_layers: (1 << 4) | (1 << 9) | (1 << 14) | (1 << 19),
            qkv_conv_taps: 3,
        };
        family(16384, 2, 20, (48, 64), (4096, 18432), &[3, 7, 11, 15, 19], layers)
    }

    #[test]
    fn a_512_token_session_at_the_shipped_geometry_holds_9_2_mb_of_f32_kv_or_2_5_mb_of_int8() {
        let g = shipped();
        let all: Vec<usize> = (0..20).collect();
        // per position and layer: 2 kv heads x (48 + 64) values, f32 or int8 with scales
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
