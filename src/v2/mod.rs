//! The Needle 2 model (cactus-needle 2.0.15 `SimpleAttentionNetwork`, as its incremental
//! decoder `_forward_cached` runs it), incremental. The forward pass itself is
//! [`crate::blocks::stages`], shared with Needle 3; this module holds what Needle 2 plugs in.
//!
//! A [`Model`] borrows the container's weights and never changes; a [`State`] holds everything
//! one sequence needs (KV rings, Engram tails, streamed head pools, scratch), made by
//! [`Model::new_state`]; the KV rings grow with the sequence up to its capacity (doubling), so
//! decoding does no heap work between growth steps. Tokens enter through
//! [`Model::prefill`] (batched) or [`Model::step`]; both run the same per-token arithmetic, so
//! they agree bit for bit.
//!
//! The residual stack is the one both generations share ([`crate::blocks::stages`]): scaled tied
//! embedding, mHC lanes with Sinkhorn routing, Engram sites gated on the lane-mixed block
//! input, gated attention with q/k norms and RoPE, lane mean, final norm, tied head. What is
//! Needle 2's own lives here: one head width for q, k and v and no conv taps, the Walsh-only
//! MLP, one attention window for every layer (the header's `kv_window`, switchable per
//! state), no A8 rounding of the mHC input in deploy numerics, and probe heads whose probes
//! attend over all layers' cells at once.
//!
//! Where upstream's full forward and its incremental decoder disagree, this follows the
//! decoder: a layer listed for two Engram sites runs the first only, and whether an n-gram or
//! an Engram conv tap exists depends on positions alone (the full forward also cuts them at
//! the attention window, which matters only for windows under `taps * dilation` positions).

mod geometry;
mod heads;
mod mlp;
mod model;
mod state;

pub use crate::blocks::{KvPrecision, Numerics};
pub use crate::container::V2HeadKind as HeadKind;
pub use geometry::{Geometry, Window};
pub use state::{Model, Needle2, Options, State};
