//! The Needle 3 model (cactus-needle 3.2.8 `SimpleAttentionNetwork`), incremental.
//!
//! **The forward pass itself is [`crate::blocks::stages`]**, shared with Needle 2 and read top
//! to bottom as named stages (embed; per block mix_in, engram, attention, mlp_write_back;
//! final_norm_head). This module holds what Needle 3 plugs into it: the MLP
//! (`mlp.rs`, [`crate::blocks::stack::Mlp`]), the geometry and layer plan, the probe heads and
//! the depth ladder.
//!
//! A [`Model`] borrows the container's weights and never changes; a [`State`] holds everything
//! one sequence needs (KV rings, conv and Engram tails, streamed head pools, scratch), made by
//! [`Model::new_state`]; the KV rings grow with the sequence up to its capacity (doubling), so
//! decoding does no heap work between growth steps. Tokens enter through
//! [`Model::prefill`] (batched: each weight matrix is decoded once per chunk of tokens) or
//! [`Model::step`]; both run the same per-token arithmetic, so they agree bit for bit.
//!
//! The residual stack (embedding, mHC lanes, Engram, gated attention, final norm, tied head)
//! is the one both generations share ([`crate::blocks::stages`]); what is Needle 3's own lives here:
//! the geometry with its local/global layers and q/k/v conv taps, the Walsh-Monarch MLP, the
//! probe heads with per-row pools and the depth ladder.

mod geometry;
#[cfg(feature = "gpu")]
mod gpu;
mod heads;
mod ladder;
pub(crate) mod mlp;
mod model;
mod state;

pub use crate::blocks::{KvPrecision, Numerics};
pub use crate::container::HeadKind;
pub use geometry::{Geometry, Layers};
#[cfg(feature = "gpu")]
pub use gpu::Needle3Gpu;
pub use ladder::{ladder_layer_indices, ladder_order};
pub use state::{Model, Needle3, Options, State};
