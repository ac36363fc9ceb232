//! The cost model of the GPU pass (issue 48), **modeled, not measured**: for each recorded
//! dispatch the bytes it reads and writes from buffers and its multiply-adds, summed per prefill
//! chunk, per prompt and per decode token, and a roofline estimate on reference GPUs. It needs
//! the recording only (no device), so it chooses kernel shapes where no GPU is at hand; lavapipe
//! timings cannot (`README.md`). The driver is `tools/bench/gpu_cost_model.rs`.
//!
//! Convention. *Weight bytes* are the CQ codes and FP16 norms a projection or gather requests,
//! counted once per workgroup that reads them (workgroup memory and registers are the only reuse
//! credited, no cache): `plain`'s `matmul` reads a row once per token, `matmul_tiled` once per
//! tile of 64 tokens, `matvec_tiled` once per token. *Other bytes* (activations, float weights,
//! code tables, the sequence state) are counted once per dispatch, its footprint: a few hundred
//! KB a dispatch at the shipped geometry, which stays in any GPU's L2.
//!
//! Roofline. A dispatch takes `max(bytes / bandwidth, 2 · madds / fp32 rate)`, both rates scaled
//! by `min(1, workgroups / slots)` (`slots`: 64-lane workgroups the GPU runs at once, its FP32
//! lanes / 64: a dispatch of fewer workgroups leaves the rest idle), plus [`DISPATCH_S`] per
//! dispatch and [`SUBMIT_S`] per chunk or step (one submission and its readback).
use std::vec::Vec;

use super::device::Kernel;
use super::generation::GpuGeneration;
use super::program::{Dispatch, Scope};
use super::stages::{self, Recorded};
use super::variant;
use super::weights::Weights;
use crate::blocks::model::Model;
use crate::session::GpuKernels;
use crate::Result;

/// A reference GPU: published memory bandwidth and FP32 rate.
pub struct Reference {
    pub name: &'static str,
    /// Bytes a second.
    pub bandwidth: f64,
    /// FP32 operations a second (a multiply-add is two).
    pub fp32: f64,
    /// 64-lane workgroups it runs at once (FP32 lanes / 64).
    pub slots: f64,
}

/// Three reference GPUs, as their makers publish them.
pub const REFERENCES: [Reference; 3] = [
    // 96 EUs x 8 FP32 lanes at 1.3 GHz; dual-channel LPDDR4x-4266.
    Reference { name: "Intel Iris Xe 96EU (laptop)", bandwidth: 68.3e9, fp32: 2.0e12, slots: 12.0 },
    // 10-core GPU, 1,280 ALUs; LPDDR5-6400 unified memory.
    Reference { name: "Apple M2 10-core GPU", bandwidth: 100e9, fp32: 3.6e12, slots: 20.0 },
    // 5,888 CUDA cores; GDDR6X 504 GB/s.
    Reference { name: "NVIDIA RTX 4070 (desktop)", bandwidth: 504e9, fp32: 29.1e12, slots: 92.0 },
];

/// Stated overheads: one dispatch inside a compute pass (encoding, launch, the barrier between
/// dependent dispatches), and one submission with its mapped readback.
pub const DISPATCH_S: f64 = 4e-6;
pub const SUBMIT_S: f64 = 200e-6;

/// What a span of dispatches costs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cost {
    /// CQ codes and norms requested (the convention above).
    pub weight_bytes: u64,
    /// Of which the projections' (`matmul`), not the gathers'.
    pub projection_bytes: u64,
    /// The projections' codes and norms, each matrix once per dispatch (the least a kernel can
    /// read): `projection_bytes` over this is how often a phase reads its weights.
    pub projection_once: u64,
    /// Activations, float weights and state, once per dispatch.
    pub other_bytes: u64,
    pub madds: u64,
    pub dispatches: u64,
    pub submissions: u64,
    /// Modeled seconds on each of [`REFERENCES`].
    pub seconds: [f64; 3],
}

impl Cost {
    fn add(&mut self, o: &Cost) {
        self.weight_bytes += o.weight_bytes;
        self.projection_bytes += o.projection_bytes;
        self.projection_once += o.projection_once;
        self.other_bytes += o.other_bytes;
        self.madds += o.madds;
        self.dispatches += o.dispatches;
        self.submissions += o.submissions;
        for (s, t) in self.seconds.iter_mut().zip(o.seconds) {
            *s += t;
        }
    }

    /// This cost spread over `n` (the mean of `n` chunks).
    fn per(&self, n: u64) -> Cost {
        let d = |v: u64| v / n.max(1);
        Cost {
            weight_bytes: d(self.weight_bytes),
            projection_bytes: d(self.projection_bytes),
            projection_once: d(self.projection_once),
            other_bytes: d(self.other_bytes),
            madds: d(self.madds),
            dispatches: d(self.dispatches),
            submissions: d(self.submissions),
            seconds: self.seconds.map(|s| s / n.max(1) as f64),
        }
    }
}

/// The model of one variant.
pub struct Report {
    pub kernels: GpuKernels,
    /// The prefill chunk.
    pub chunk: usize,
    pub prompt_tokens: usize,
    /// Bytes of the codes buffer (projections, embedding, Engram memory).
    pub codes_bytes: u64,
    /// Every GPU buffer, as `Runner::new` allocates them (`Engine::device_bytes`).
    pub device_bytes: u64,
    /// The mean prefill chunk of the prompt, the whole prompt (prefill, last logits row), and a
    /// decode step right after it.
    pub chunk_cost: Cost,
    pub prompt: Cost,
    pub decode: Cost,
}

/// The model of `needle` (built over `bytes`) on `kernels` with `options` (its chunk the prefill
/// chunk): a prompt of `prompt_tokens`, then one decode step.
pub fn model<'a, G: GpuGeneration>(
    bytes: &'a [u8],
    needle: &Model<'a, G>,
    options: &G::Options,
    kernels: GpuKernels,
    prompt_tokens: usize,
) -> Result<Report> {
    let (rec, codes_bytes, device_bytes) = footprint(bytes, needle, options)?;
    let b = G::shape(options).chunk;
    let mut prompt = Cost::default();
    let chunks = prompt_tokens.div_ceil(b);
    for ci in 0..chunks {
        let tokens = b.min(prompt_tokens - ci * b);
        let head = (ci + 1 == chunks).then_some(1);
        prompt.add(&step(&rec, kernels, tokens, ci * b, head));
    }
    let decode = step(&rec, kernels, 1, prompt_tokens, Some(1));
    Ok(Report {
        kernels,
        chunk: b,
        prompt_tokens,
        codes_bytes,
        device_bytes,
        chunk_cost: prompt.per(chunks as u64),
        prompt,
        decode,
    })
}

/// `model`'s pass recorded for `options` (its chunk the prefill chunk), with the bytes of its
/// codes buffer and of every GPU buffer as `Runner::new` allocates them
/// (`Engine::device_bytes`): codes, float weights, activations, state, ids, the readback of a
/// chunk's logits and probe cells, the parameter slots.
pub(crate) fn footprint<'a, G: GpuGeneration>(
    bytes: &'a [u8],
    model: &Model<'a, G>,
    options: &G::Options,
) -> Result<(Recorded, u64, u64)> {
    let state = G::new_state(model, options)?;
    let mut w = Weights::new(bytes);
    let plan = &state.seq.plan;
    let listening = !state.pools.is_empty();
    let shape = G::shape(options);
    let b = shape.chunk;
    let rec = stages::record(&model.stack, &mut w, plan, &shape, listening)?;
    let (v, d) = (model.logits_len(), model.stack.d_model);
    let cell_rows = if listening { plan.len() + 1 } else { 0 };
    let codes_bytes = w.code_words().len() as u64;
    let device_bytes = codes_bytes
        + 4 * (w.floats.len() + rec.act_len + rec.state_len + rec.ids_len) as u64
        + 4 * (b * (v + cell_rows * d)) as u64
        + rec.program.params.len() as u64 * 4;
    Ok((rec, codes_bytes, device_bytes))
}

/// One chunk of `tokens` from position `pos`, the head on `head` rows: every dispatch and the
/// submission.
fn step(rec: &Recorded, kernels: GpuKernels, tokens: usize, pos: usize, head: Option<u32>) -> Cost {
    let mut total = Cost { submissions: 1, seconds: [SUBMIT_S; 3], ..Cost::default() };
    for d in &rec.program.dispatches {
        let n = match (d.scope, head) {
            (Scope::Chunk, _) => tokens as u32,
            (Scope::Head, Some(rows)) => rows,
            (Scope::Head, None) => continue,
        };
        let at = d.slot as usize * super::program::WORDS;
        let p = &rec.program.params[at..at + super::program::WORDS];
        total.add(&dispatch(d, p, kernels, n, pos as u64));
    }
    total
}

/// One dispatch over `n` tokens from position `pos`, its parameter slot `p`: its bytes and
/// multiply-adds by kernel family (as `shaders/` groups them), then its roofline time.
fn dispatch(d: &Dispatch, p: &[u32], kernels: GpuKernels, n: u32, pos: u64) -> Cost {
    let (kernel, (x, y)) = variant::grid(kernels, d, n);
    let at = Slot { p, n: u64::from(n), pos };
    let mut c = match kernel {
        Kernel::Matmul
        | Kernel::MatvecTiled
        | Kernel::MatvecSubgroup
        | Kernel::MatmulTiled
        | Kernel::GatherRows
        | Kernel::Rotate => at.cq(kernel),
        Kernel::LaneMean | Kernel::CopyRows | Kernel::TailWrite => at.rows(kernel),
        Kernel::Coefficients | Kernel::Collapse | Kernel::Expand => at.mhc(kernel),
        Kernel::EngramGate | Kernel::EngramConv => at.engram(kernel),
        Kernel::QkvConv | Kernel::QkNormRope | Kernel::KvWrite | Kernel::Attend => {
            at.attention(kernel)
        }
        Kernel::PostResidual
        | Kernel::CondLogits
        | Kernel::MlpIn
        | Kernel::KronRight
        | Kernel::KronLeft
        | Kernel::MlpMid
        | Kernel::MlpOut => at.mlp(kernel),
    };
    c.dispatches = 1;
    c.seconds = roofline(&c, f64::from(x) * f64::from(y));
    c
}

/// Modeled seconds of a dispatch of `groups` workgroups costing `c` on each reference GPU.
fn roofline(c: &Cost, groups: f64) -> [f64; 3] {
    REFERENCES.map(|r| {
        let busy = (groups / r.slots).min(1.0);
        let bytes = (c.weight_bytes + c.other_bytes) as f64;
        let memory = bytes / (r.bandwidth * busy);
        let compute = 2.0 * c.madds as f64 / (r.fp32 * busy);
        memory.max(compute) + DISPATCH_S
    })
}

/// Bytes of an f32.
const F: u64 = 4;

fn log2(v: u64) -> u64 {
    u64::from(v.max(1).ilog2())
}

/// One dispatch's parameter slot over `n` tokens from position `pos`; each family below reads
/// the words its kernels take (`stages.rs` records them).
struct Slot<'p> {
    p: &'p [u32],
    n: u64,
    pos: u64,
}

impl Slot<'_> {
    fn w(&self, i: usize) -> u64 {
        u64::from(self.p[i])
    }

    /// cq.wgsl, cq_tiled.wgsl, cq_subgroup.wgsl, hadamard.wgsl: the projections, the gathers,
    /// the rotations.
    fn cq(&self, kernel: Kernel) -> Cost {
        let (n, w) = (self.n, |i| self.w(i));
        let mut c = Cost::default();
        match kernel {
            Kernel::GatherRows => {
                // 2 bits, 4 groups, 5 group, 6 cols, 8 tables.
                let (groups, g, tables) = (w(4), w(5), w(8));
                c.weight_bytes = n * tables * groups * (g * w(2) / 8 + 2);
                c.other_bytes = F * (n * tables * w(6) + (1 << w(2)));
                c.madds = n * tables * groups * g * (1 + log2(g));
            }
            Kernel::Rotate => {
                // 7: the RMS norm fused in (its gain read once).
                c.other_bytes = F * (n * (w(2) + w(3)) + w(7) * w(2));
                c.madds = n * (w(3) * log2(w(4)) + 2 * w(7) * w(2));
            }
            _ => {
                // 1 row bits, 2 bits, 4 groups, 5 group, 6 rows.
                let (rows, groups, cp) = (w(6), w(4), w(4) * w(5));
                let row = w(1) / 8 + 2 * groups;
                let passes = match kernel {
                    Kernel::MatmulTiled => n.div_ceil(u64::from(variant::TILE_TOKENS)),
                    _ => n,
                };
                c.weight_bytes = passes * rows * row;
                c.projection_bytes = c.weight_bytes;
                c.projection_once = rows * row;
                c.other_bytes = F * (n * cp + (1 << w(2)) + n * rows);
                c.madds = n * rows * cp;
            }
        }
        c
    }

    /// norm.wgsl and rows.wgsl: the lane mean, row copies, tail writes.
    fn rows(&self, kernel: Kernel) -> Cost {
        let (n, w) = (self.n, |i| self.w(i));
        let mut c = Cost::default();
        match kernel {
            Kernel::LaneMean => {
                c.other_bytes = F * n * (w(1) + 1) * w(2);
                c.madds = n * w(1) * w(2);
            }
            Kernel::CopyRows => c.other_bytes = F * n * w(2) * 2,
            _ => c.other_bytes = F * 2 * n.min(w(4)) * w(2),
        }
        c
    }

    /// mhc.wgsl: the lanes' coefficients, their collapse and expansion.
    fn mhc(&self, kernel: Kernel) -> Cost {
        let (n, w) = (self.n, |i| self.w(i));
        let mut c = Cost::default();
        match kernel {
            Kernel::Coefficients => {
                let l = w(3);
                c.other_bytes = F * (2 * n * (2 * l + l * l) + 2 * l + l * l);
                // 20 Sinkhorn rounds over rows and columns, each a log-sum-exp of l.
                c.madds = n * 20 * 2 * l * l * 2;
            }
            Kernel::Collapse => {
                let (l, dm) = (w(2), w(3));
                c.other_bytes = F * n * (l * dm + l + 2 * dm);
                c.madds = n * l * dm;
            }
            _ => {
                let (l, dm) = (w(5), w(6));
                c.other_bytes = F * n * (2 * l * dm + l * l + l + dm);
                c.madds = n * l * dm * (l + 1);
            }
        }
        c
    }

    /// engram.wgsl: the gate and the dilated conv.
    fn engram(&self, kernel: Kernel) -> Cost {
        let (n, w) = (self.n, |i| self.w(i));
        let mut c = Cost::default();
        if kernel == Kernel::EngramGate {
            c.other_bytes = F * n * (2 * w(2) + 1);
            c.madds = 5 * n * w(2);
        } else {
            // 10: the block's last site, which adds the sites' sum into the residual.
            let (dm, taps, adds) = (w(1), w(3), u64::from(self.p[10] != u32::MAX));
            c.other_bytes = F
                * (2 * n * dm + taps * dm + taps.saturating_sub(1) * w(4) * dm + adds * 2 * n * dm);
            c.madds = n * dm * (taps + adds);
        }
        c
    }

    /// attention.wgsl: the q/k/v conv, the q/k norm and RoPE, the KV write, the attention.
    fn attention(&self, kernel: Kernel) -> Cost {
        let (n, w) = (self.n, |i| self.w(i));
        let mut c = Cost::default();
        match kernel {
            Kernel::QkvConv => {
                let (width, taps) = (w(1), w(3));
                c.other_bytes = F * (2 * n * width + taps * width + taps.saturating_sub(1) * width);
                c.madds = n * width * taps;
            }
            Kernel::QkNormRope => {
                let (qk, hs) = (w(2), w(3) + w(4));
                c.other_bytes = F * (2 * n * hs * qk + 2 * qk + n * qk);
                c.madds = 4 * n * hs * qk;
            }
            Kernel::KvWrite => {
                let (qk, vw, kvh) = (w(2), w(3), w(5));
                let stored = if w(11) == 1 { 1 } else { F };
                c.other_bytes = n * kvh * ((qk + vw) * (F + stored) + 2 * F * w(11));
            }
            _ => {
                // Keys of each token: its causal window; each kv head's keys and values read
                // once.
                let (qk, vw, heads, kvh, window) = (w(2), w(3), w(4), w(5), w(12));
                let pos = self.pos;
                let keys =
                    |t: u64| if window > 0 { (pos + t + 1).min(window) } else { pos + t + 1 };
                let key_sum: u64 = (0..n).map(keys).sum();
                let stored = if w(11) == 1 { 1 } else { F };
                let scales = 2 * F * w(11);
                c.other_bytes = keys(n - 1).min(w(6)) * kvh * ((qk + vw) * stored + scales)
                    + F * n * (heads * (qk + 2 * vw));
                c.madds = key_sum * heads * (qk + vw);
            }
        }
        c
    }

    /// mlp.wgsl: the post-attention residual and norms, the MLP's stages.
    fn mlp(&self, kernel: Kernel) -> Cost {
        let (n, w) = (self.n, |i| self.w(i));
        let mut c = Cost::default();
        match kernel {
            Kernel::PostResidual => {
                c.other_bytes = F * (4 * n * w(3) + 2 * w(3));
                c.madds = 6 * n * w(3);
            }
            Kernel::CondLogits => {
                let (dm, rank) = (w(1), w(3));
                c.other_bytes = F * (n * dm + rank * dm + n * rank);
                c.madds = n * rank * dm;
            }
            Kernel::MlpIn => {
                let (dm, nn, rank) = (w(1), w(2), w(4));
                c.other_bytes = F * (n * (rank + dm + 2 * nn) + rank * nn + nn);
                c.madds = n * nn * rank;
            }
            Kernel::KronRight | Kernel::KronLeft => {
                let (a, b) = (w(2), w(3));
                let side = if kernel == Kernel::KronRight { b } else { a };
                c.other_bytes = F * (2 * n * a * b + side * side);
                c.madds = n * a * b * side;
            }
            Kernel::MlpMid => {
                c.other_bytes = F * (3 * n * w(1) + 3 * w(1));
                c.madds = 3 * n * w(1);
            }
            _ => {
                c.other_bytes = F * (4 * n * w(5) + w(5));
                c.madds = 2 * n * w(5);
            }
        }
        c
    }
}

/// The reports as a Markdown table: per phase, the weight bytes, how often the projections' codes
/// are read over it, the other bytes, multiply-adds, dispatches and the modeled time on each
/// reference GPU.
pub fn table(reports: &[Report]) -> std::string::String {
    use core::fmt::Write;
    let mut out = std::string::String::new();
    let mb = |b: u64| b as f64 / 1e6;
    let _ = writeln!(
        out,
        "| kernels | phase | weight MB read | projections read (x once) | other MB | M multiply-adds | dispatches | {} |",
        REFERENCES.map(|r| r.name).join(" | ")
    );
    let _ = writeln!(out, "|{}", " --- |".repeat(7 + REFERENCES.len()));
    for r in reports {
        let phases = [
            (std::format!("prefill chunk of {}", r.chunk), &r.chunk_cost),
            (std::format!("{}-token prompt", r.prompt_tokens), &r.prompt),
            ("decode token".into(), &r.decode),
        ];
        for (phase, c) in phases {
            let ms: Vec<std::string::String> =
                c.seconds.iter().map(|s| std::format!("{:.2} ms", s * 1e3)).collect();
            let _ = writeln!(
                out,
                "| {:?} | {phase} | {:.2} | {:.2}x | {:.2} | {:.1} | {} | {} |",
                r.kernels,
                mb(c.weight_bytes),
                c.projection_bytes as f64 / c.projection_once.max(1) as f64,
                mb(c.other_bytes),
                c.madds as f64 / 1e6,
                c.dispatches,
                ms.join(" | ")
            );
        }
    }
    out
}
