//! The pieces both Needle generations compute the same way. [`model`] is the Needle model,
//! once, generic over its generation ([`state::Generation`]), its shape [`geometry`], built
//! from either container by [`build`]; the forward pass is [`stages`]
//! (named stages read top to bottom); [`stack`] holds its weights, sequence state and entry
//! point; then the blocks the stages call (mHC lanes with Sinkhorn routing, gated attention
//! over a KV ring, Engram n-gram memory), the CQ projections of a chunk, the streamed softmax
//! pool of the probe heads, and typed tensor access.
//!
//! [`crate::v3`] and [`crate::v2`] hold only what is their own (how the model is built from
//! their container, geometry, MLP, probe heads, depth rungs, options) and plug it into
//! [`model::Model`] and [`stack::Stack`].

pub(crate) mod a8;
pub(crate) mod attention;
pub(crate) mod build;
pub(crate) mod engram;
pub(crate) mod geometry;
pub(crate) mod kv;
pub(crate) mod mhc;
pub(crate) mod model;
pub(crate) mod persist;
pub(crate) mod pool;
mod project;
mod scratch;
pub(crate) mod stack;
pub(crate) mod stages;
pub(crate) mod state;
pub(crate) mod tensors;

pub use kv::KvPrecision;

/// Every RMS norm's epsilon, in both generations.
pub(crate) const EPS: f32 = 1e-6;

/// Which arithmetic the forward pass reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numerics {
    /// Plain f32 (upstream `quant=False`).
    Exact,
    /// Upstream's deployment numerics (`quant=True` after `configure_deploy(8, 8)`): each
    /// per-token A8 point rounds its vector to int8 — the attention input (q/k/v/gate
    /// projections), the attention output (before `out_proj`), the Engram memory (before its
    /// key/value projections) and the final hidden state (before the output head); Needle 3
    /// also rounds the mHC coefficient input. The MLP, the embedding lookup and the probe
    /// heads' inputs stay f32. Needle 3 pairs it with [`KvPrecision::Int8`]; Needle 2's
    /// `kv_bits = 8` means no KV rounding.
    Deploy,
}

pub(crate) use crate::kernels::activation::{sigmoid, silu};
