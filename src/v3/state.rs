//! Needle 3 as a generation: its options (the depth is its own) and the types it plugs into
//! the shared model and state (`blocks::state`: KV rings that grow with the sequence, conv and
//! Engram tails, chunk scratch, the streamed head pools). [`Needle3`] is the generation they
//! are instantiated with: this file names both ([`Model`], [`State`]); `Model::new_state`
//! (`model.rs`) makes a state.
use super::geometry::Layers;
use super::heads::ProbeHead;
use super::mlp::HadamardMlp;
use crate::blocks::state::generation;

generation! {
    /// Needle 3 as the shared model and state see it.
    Needle3 {
        Attention = Layers,
        A8_MIXING = true,
        EVERY_SITE = true,
        Mlp = HadamardMlp,
        Head = ProbeHead,
    }
    /// Blocks to run: the model's layer count, or a shallower ladder rung (2 and up).
    depth: usize
}
