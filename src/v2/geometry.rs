//! The shape of a Needle 2 model, from its container header, and what a session of it costs.
use alloc::vec::Vec;

use super::KvPrecision;
use crate::blocks::geometry;
use crate::blocks::stack::LayerPlan;
use crate::container::V2Header;
use crate::Result;

/// Needle 2's attention: every layer runs one window.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// The attention window the model runs with: keys a token sees, itself included
    /// (0 = every earlier position).
    pub kv_window: usize,
}

/// Header geometry in the units the forward pass uses.
pub type Geometry = geometry::Geometry<Window>;

impl Geometry {
    /// Reads the geometry off a header (one `head_dim` for queries, keys and values; the
    /// whole vocabulary is the output head).
    pub fn from_header(h: &V2Header) -> Result<Self> {
        let own = (h.qk_head_dim, h.vocab, 0);
        Self::from_core(&h.core, &h.engram, own, Window { kv_window: h.kv_window as usize })
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
    use crate::blocks::geometry::test_util::family;

    /// upstream 2.0.15's `needle` preset (d_model 768, 27 layers, 12/6 heads of 64) with the
    /// window its CLI exports (`effective_kv_window`: 480 positions).
    fn preset() -> Geometry {
        let size = (2048, 8192);
        family(8192, 6, 27, (64, 64), size, &[2, 15], Window { kv_window: 480 })
    }

    #[test]
    fn a_windowed_ring_stops_at_the_window_and_a_full_causal_one_grows_with_the_session() {
        let g = preset();
        // (window, session length) -> positions a ring holds
        for (window, len, slots) in [(480, 2048, 480), (480, 300, 300), (0, 2048, 2048)] {
            assert_eq!(g.kv_slots(window, len), slots, "window {window}, {len} tokens");
        }
        // per position and layer: 6 kv heads x 64 for keys and again for values, f32 or int8
        // with a scale per kv head
        assert_eq!(g.kv_bytes(480, 2048, KvPrecision::F32), 27 * 480 * 3072);
        assert_eq!(g.kv_bytes(480, 2048, KvPrecision::Int8), 27 * 480 * 816);
    }
}
