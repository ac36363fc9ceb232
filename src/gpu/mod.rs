//! The GPU backend: the shared model's whole forward pass as WGSL compute shaders through `wgpu`
//! (Vulkan, Metal, DX12 natively; lavapipe in CI). Design, figures and limits: `README.md`.
//!
//! [`GpuModel`] is a model and one sequence on the GPU, with the CPU model's entry points
//! (`prefill`, `prefill_rows`, `step`); the session reaches it through its `Net` when loaded
//! with `backend: gpu`. It sits beneath the generations: it runs the shared
//! [`Model`](crate::blocks::model::Model) of any generation that says what the backend needs
//! ([`GpuGeneration`], [`GpuMlp`]; Needle 3 in `v3/gpu.rs`) and imports none. The forward pass
//! is [`stages`] (the CPU stages' GPU twins); the CQ weights stay 4-bit codes and FP16 norms,
//! read in place from the container bytes.
//!
//! What stays on the CPU: the input checks, the RoPE angles and Engram slot hashes (ids and
//! positions alone, by the CPU stages themselves), and the probe heads' streamed pools (their
//! cells come back with the logits in the step's one readback).
//!
//! [`wait`] is the one place a GPU future or buffer map is waited for (natively by polling, in
//! the browser's `gpu` wasm variant through JSPI); [`probe`] opens a device and proves it
//! computes.
mod chunk;
pub mod cost;
mod device;
mod generation;
mod mlp;
pub mod probe;
mod program;
mod runner;
mod stages;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod twins;
mod variant;
pub mod wait;
mod weights;

use std::string::String;
use std::vec;

use crate::blocks::model::Model;
use crate::blocks::pool::Tracked;
use crate::blocks::stack::Logits;
use crate::blocks::state::{Generation, Mark, State};
use crate::blocks::Numerics;
use crate::session::GpuKernels;
use crate::{Error, Result};
pub use chunk::{tiled_chunk, CHUNKS, MEMORY_BOUND};
pub use generation::{GpuGeneration, GpuMlp, Hadamard, Kron, Shape};
use runner::{ChunkInputs, Runner};
pub use variant::{from_env as kernels_from_env, TILED_CHUNK};

/// A model of generation `G` and one sequence on the GPU. The CPU-side [`State`] keeps the
/// position, the recent ids and the probe-head pools (its own KV rings stay empty).
pub struct GpuModel<'a, G: GpuGeneration> {
    model: Model<'a, G>,
    state: State<G>,
    runner: Runner,
}

/// A saved position of a [`GpuModel`]: the CPU bookkeeping and a GPU copy of the sequence
/// state.
pub struct GpuMark<G: Generation> {
    cpu: Mark<G>,
    gpu: wgpu::Buffer,
}

impl<'a, G: GpuGeneration> GpuModel<'a, G> {
    /// `model` (built over `bytes`) on the first GPU adapter, with a sequence made from
    /// `options`, on `kernels` (prefill chunks stay the options' chunk). Deploy numerics are
    /// refused (CPU only for now).
    pub fn from_model(
        bytes: &'a [u8],
        model: Model<'a, G>,
        options: &G::Options,
        kernels: GpuKernels,
    ) -> Result<Self> {
        let shape = G::shape(options);
        if shape.numerics == Numerics::Deploy {
            return Err(Error::Unsupported { what: "deploy numerics on the GPU backend" });
        }
        let state = G::new_state(&model, options)?;
        let gpu = device::Gpu::new()?;
        let mut w = weights::Weights::new(bytes);
        let plan = &state.seq.plan;
        let listening = !state.pools.is_empty();
        let rec = stages::record(&model.stack, &mut w, plan, &shape, listening)?;
        let cell_rows = if listening { plan.len() + 1 } else { 0 };
        let (v, d) = (model.logits_len(), model.stack.d_model);
        let runner = Runner::new(gpu, rec, w.code_words(), &w.floats, v, (cell_rows, d), kernels)?;
        Ok(Self { model, state, runner })
    }

    pub fn model(&self) -> &Model<'a, G> {
        &self.model
    }

    pub fn state(&self) -> &State<G> {
        &self.state
    }

    /// The adapter: name, backend, device type.
    pub fn adapter(&self) -> &str {
        &self.runner.gpu.adapter
    }

    /// Dispatches one chunk costs, with the head (`true`) or without.
    pub fn dispatches_per_chunk(&self, head: bool) -> usize {
        self.runner.dispatches(head)
    }

    /// Bytes a chunk of `tokens` reads back when `rows` logits rows are wanted (the rows and
    /// the probe-head cells of every token).
    pub fn readback_bytes(&self, rows: usize, tokens: usize) -> usize {
        self.runner.readback_bytes(rows, tokens)
    }

    /// The kernel variant the pass was recorded on.
    pub fn kernels(&self) -> GpuKernels {
        self.runner.kernels
    }

    /// Bytes of every GPU buffer (weights, activations, sequence state, readback).
    pub fn gpu_bytes(&self) -> u64 {
        self.runner.total_bytes
    }

    /// Bytes of the sequence state on the GPU (KV rings and tails, allocated whole at load).
    pub fn state_bytes(&self) -> u64 {
        self.runner.state_bytes
    }

    /// Runs `tokens`, writing the logits after the last one.
    pub fn prefill(&mut self, tokens: &[u32], logits: &mut [f32]) -> Result<()> {
        let v = self.model.logits_len();
        self.advance(tokens, Logits::last(logits, v)?)
    }

    /// Runs `tokens`, writing the logits after each of them.
    pub fn prefill_rows(&mut self, tokens: &[u32], rows: &mut [f32]) -> Result<()> {
        let v = self.model.logits_len();
        self.advance(tokens, Logits::all(rows, tokens.len(), v)?)
    }

    pub fn step(&mut self, token: u32, logits: &mut [f32]) -> Result<()> {
        self.prefill(core::slice::from_ref(&token), logits)
    }

    /// Destroys the device under the model, as a driver reset would: every later call is
    /// `GpuLost` (for the failure tests).
    #[doc(hidden)]
    pub fn lose_device(&self) {
        self.runner.gpu.destroy();
    }

    /// Forgets the sequence (stale GPU ring entries are never read again).
    pub fn reset(&mut self) {
        self.state.reset();
    }

    pub fn mark(&self) -> GpuMark<G> {
        GpuMark { cpu: self.state.mark(), gpu: self.runner.mark() }
    }

    pub fn rewind(&mut self, mark: &GpuMark<G>) {
        self.state.rewind(&mark.cpu);
        self.runner.rewind(&mark.gpu);
    }

    /// Mirrors `Stack::advance`: the same checks, then each chunk as one GPU submission.
    fn advance(&mut self, tokens: &[u32], mut logits: Logits<'_>) -> Result<()> {
        let Self { model, state, runner } = self;
        let listening = !state.pools.is_empty();
        model.stack.check_tokens(&state.seq, tokens, listening)?;
        let (b, v, d) = (runner.chunk(), model.logits_len(), model.stack.d_model);
        let plan_rows: std::vec::Vec<usize> =
            core::iter::once(0).chain(state.seq.plan.iter().map(|p| p.layer + 1)).collect();
        let mut cells = vec![0.0f32; if listening { plan_rows.len() * b * d } else { 0 }];
        let chunks = tokens.len().div_ceil(b);
        for (ci, chunk) in tokens.chunks(b).enumerate() {
            let pos = state.seq.pos;
            let (head_first, out): (Option<usize>, &mut [f32]) = match &mut logits {
                Logits::All(rows) => (Some(0), &mut rows[ci * b * v..(ci * b + chunk.len()) * v]),
                Logits::Last(row) if ci + 1 == chunks => (Some(chunk.len() - 1), &mut row[..]),
                Logits::Last(_) => (None, &mut []),
            };
            let (cos, sin, slots) = model.stack.chunk_inputs(&mut state.seq, chunk);
            let inputs = ChunkInputs { ids: chunk, pos, cos, sin, slots, head_first };
            runner.run_chunk(&inputs, out, &mut cells)?;
            if listening {
                let mut tracked = Tracked { heads: &model.heads, pools: &mut state.pools };
                for (i, &row) in plan_rows.iter().enumerate() {
                    for j in 0..chunk.len() {
                        let at = (i * chunk.len() + j) * d;
                        tracked.add(row, &cells[at..at + d]);
                    }
                }
            }
            state.seq.advance_ids(chunk);
        }
        Ok(())
    }
}

/// Whether the GPU backend runs here: `Ok(None)` when an adapter exists and our device and every
/// pipeline come up on it, `Ok(Some(reason))` when there is no adapter, `Err` when there is one
/// but our device or a shader of ours fails on it (a fault of ours, never a reason to skip).
pub fn missing_adapter() -> Result<Option<String>> {
    if let Err(e) = device::adapter() {
        return Ok(Some(std::format!("{e}")));
    }
    device::Gpu::new().map(|_| None)
}

/// For the GPU test suites: whether the adapter offers subgroups, where the `subgroup` kernels
/// run (and are compiled); `false`, saying so, elsewhere: those kernels are then untested here.
#[doc(hidden)]
pub fn subgroups_or_skip() -> bool {
    let offered = device::adapter().ok().map(|a| (a.get_info(), device::offers_subgroups(&a)));
    match offered {
        Some((_, true)) => true,
        Some((info, false)) => {
            std::eprintln!("SKIPPED: subgroup kernels untested: {} offers no subgroups", info.name);
            false
        }
        None => false,
    }
}

/// For the GPU test suites: `true` when the GPU backend runs here; `false`, saying why, where no
/// adapter exists, unless `NEEDLE_REQUIRE_GPU=1` (CI's lavapipe stage) makes that a failure too.
/// An adapter on which our device or a shader of ours fails is always a failure: a suite must
/// not pass by skipping a broken kernel.
#[doc(hidden)]
pub fn adapter_or_skip() -> bool {
    match missing_adapter() {
        Ok(None) => true,
        Ok(Some(reason)) if std::env::var("NEEDLE_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("NEEDLE_REQUIRE_GPU=1 but no GPU adapter: {reason}")
        }
        Ok(Some(reason)) => {
            std::eprintln!("SKIPPED: no GPU adapter ({reason})");
            false
        }
        Err(e) => panic!("a GPU adapter exists but the GPU backend fails on it: {e}"),
    }
}
