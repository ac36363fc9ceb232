//! What the GPU backend asks of a generation, so that it imports none: its blocks' MLP as the
//! `mlp.wgsl` kernels run it ([`GpuMlp`], the Walsh-Monarch shape as plain slices), and how its
//! options make a sequence ([`GpuGeneration`]). The backend runs the shared model
//! ([`Model`]) and its [`State`] over any generation that fills both; Needle 3 does, in
//! `v3/gpu.rs`.
use crate::blocks::model::Model;
use crate::blocks::stack::Mlp;
use crate::blocks::state::{Generation, State};
use crate::blocks::{KvPrecision, Numerics};
use crate::Result;

/// One Kronecker stage's factors, `out = Aᵀ Z B`: `fa` `(a, a)` and `fb` `(b, b)`, row-major.
pub struct Kron<'m> {
    pub fa: &'m [f32],
    pub fb: &'m [f32],
}

/// A block's Walsh-Monarch MLP (`n = a * b` wide) as the GPU records it; its CPU twin is
/// `v3/mlp.rs`.
pub struct Hadamard<'m> {
    /// The diagonals (`n` each) and the bias of the second stage.
    pub d1: &'m [f32],
    pub d2: &'m [f32],
    pub b2: &'m [f32],
    pub d3: &'m [f32],
    pub d4: &'m [f32],
    pub stages: [Kron<'m>; 3],
    /// The conditioning: `(rank, d_model)` and `(rank, n)`.
    pub cond_vt: &'m [f32],
    pub cond_u: &'m [f32],
    pub rank: usize,
    pub a: usize,
    pub b: usize,
}

/// A block MLP the GPU backend has kernels for.
pub trait GpuMlp: Mlp {
    fn hadamard(&self) -> Hadamard<'_>;
    /// The two fixed permutations after the first and second stages, from the model-wide data.
    fn permutations(shared: &Self::Shared) -> [&[u32]; 2];
}

/// What the GPU pass is recorded for beyond the model and its layer plan: the sequence's KV
/// precision, numerics, capacity in tokens and prefill chunk.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub kv: KvPrecision,
    pub numerics: Numerics,
    pub capacity: usize,
    pub chunk: usize,
}

/// A generation the GPU backend runs: its MLP has GPU kernels, and its options say the
/// sequence's [`Shape`] and make its CPU-side [`State`] (position, recent ids, head pools).
pub trait GpuGeneration: Generation<Mlp: GpuMlp> + Sized {
    fn shape(options: &Self::Options) -> Shape;
    /// `options` with another prefill chunk (the tiled kernels size their own: `chunk.rs`).
    fn with_chunk(options: &Self::Options, chunk: usize) -> Self::Options;
    fn new_state(model: &Model<'_, Self>, options: &Self::Options) -> Result<State<Self>>;
}
