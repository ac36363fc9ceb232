//! Kernel families on the GPU against their CPU twins in `blocks/`, one test per family, the
//! family's kernels as `stages.rs` records them over chunks of several tokens (the CQ kernels
//! and `attend` alone: `tests.rs`). The MLP's twin is the generation's: [`check_mlp`] takes
//! it through the `Mlp` trait.
//! Skips where no adapter exists (`super::adapter_or_skip`).
use std::vec;
use std::vec::Vec;

use super::device::{Gpu, Kernel};
use super::generation::GpuMlp;
use super::mlp::{self, MlpRegions};
use super::program::{Program, Scope, P};
use super::runner::{ChunkInputs, Runner};
use super::stages::{Recorded, Regions, HEADER};
use super::tests::{close, levels, run};
use super::weights::Weights;
use crate::blocks::attention::{Attention, AttnScratch, ConvTail, Heads};
use crate::blocks::engram::{self, EngramGeometry, Site, ValueTail};
use crate::blocks::kv::KvRing;
use crate::blocks::mhc::{self, MhcLayer};
use crate::blocks::{KvPrecision, EPS};
use crate::kernels::cq::{CqMatrix, CqWidth};
use crate::kernels::test_util::pseudo_random;
use crate::session::GpuKernels;

/// Offsets of regions of `b` rows of each width, laid one after another from 0; their end.
fn regions<const N: usize>(b: usize, widths: [usize; N]) -> ([u32; N], usize) {
    let mut end = 0;
    let at = widths.map(|w| {
        let a = end as u32;
        end += b * w;
        a
    });
    (at, end)
}

/// Row `t` of the region at `at` of rows `w` wide in `v`.
fn row(v: &[f32], at: u32, t: usize, w: usize) -> &[f32] {
    &v[at as usize + t * w..at as usize + (t + 1) * w]
}

fn row_mut(v: &mut [f32], at: u32, t: usize, w: usize) -> &mut [f32] {
    &mut v[at as usize + t * w..at as usize + (t + 1) * w]
}

/// mhc.wgsl (`coefficients`, `collapse`, `expand`) and norm.wgsl (`lane_mean`) against
/// `blocks/mhc.rs`: 3 tokens on 4 lanes of 40, lane 1 favoured, raw products scaled so that the
/// Sinkhorn iterations do work.
#[test]
fn mhc_lanes_and_the_lane_mean_equal_the_cpu_mhc() {
    if !super::adapter_or_skip() {
        return;
    }
    let (b, n, d, lane) = (3usize, 4usize, 40usize, 1usize);
    let (nd, nn) = (n * d, n * n);
    let (at, len) = regions(b, [nd, n, n, nn, d, d, d, nd, d]);
    let [stream, pre, post, res, y, u, x, next, mean] = at;
    // The inputs fill the regions up to `u`; the kernels write the rest.
    let mut input = pseudo_random(u as usize, 21);
    input.resize(len, 0.0);
    let (a_pre, a_post, a_res) = (0.7f32, 1.3f32, 2.5f32);
    let (b_pre, b_post, b_res) =
        (pseudo_random(n, 22), pseudo_random(n, 23), pseudo_random(nn, 24));
    let mut w = Weights::new(&[]);
    let (bp, bq, br) = (w.floats(&b_pre), w.floats(&b_post), w.floats(&b_res));
    let k = |v: usize| P::U(v as u32);
    let mut prog = Program::default();
    let coefficients = [
        P::U(pre),
        P::U(post),
        P::U(res),
        k(n),
        k(lane),
        P::F(a_pre),
        P::F(a_post),
        P::F(a_res),
        P::U(bp),
        P::U(bq),
        P::U(br),
    ];
    prog.push(Kernel::Coefficients, 1, Scope::Chunk, &coefficients);
    let collapse = [P::U(stream), P::U(pre), k(n), k(d), P::U(u), P::U(x)];
    prog.push(Kernel::Collapse, d, Scope::Chunk, &collapse);
    let expand = [P::U(stream), P::U(res), P::U(post), P::U(y), P::U(next), k(n), k(d)];
    prog.push(Kernel::Expand, nd, Scope::Chunk, &expand);
    prog.push(Kernel::LaneMean, d, Scope::Chunk, &[P::U(stream), k(n), k(d), P::U(mean), k(d)]);
    let got = run(GpuKernels::Plain, &w, prog, len, &input, b, 0, len / b);

    // The φ matrices are not read by the coefficients (they make the raw products).
    let levels = levels(CqWidth::B4);
    let phi = CqMatrix::from_parts(1, 16, 16, CqWidth::B4, &[0; 8], &[0; 2], &levels).unwrap();
    let layer = MhcLayer {
        phi_pre: phi,
        phi_post: phi,
        phi_res: phi,
        a_pre,
        a_post,
        a_res,
        b_pre,
        b_post,
        b_res,
    };
    let mut want = input.clone();
    for t in 0..b {
        let mut h = [row(&input, pre, t, n), row(&input, post, t, n), row(&input, res, t, nn)]
            .map(<[f32]>::to_vec);
        let [hpre, hpost, hres] = &mut h;
        layer.coefficients(lane, hpre, hpost, hres);
        let lanes = row(&input, stream, t, nd);
        mhc::collapse(lanes, hpre, row_mut(&mut want, u, t, d));
        mhc::collapse(lanes, hpre, row_mut(&mut want, x, t, d));
        let mut scratch = vec![0.0f32; nd];
        let mut written = lanes.to_vec();
        mhc::expand(&mut written, hres, hpost, row(&input, y, t, d), &mut scratch);
        row_mut(&mut want, next, t, nd).copy_from_slice(&written);
        mhc::lane_mean(lanes, row_mut(&mut want, mean, t, d));
        for (at, v) in [(pre, &*hpre), (post, &*hpost), (res, &*hres)] {
            row_mut(&mut want, at, t, v.len()).copy_from_slice(v);
        }
    }
    close(&got, &want, "mHC lanes and lane mean");
}

/// One attention case: a block's weights and the inputs of `total` tokens.
struct AttentionCase {
    h: Heads,
    taps: usize,
    window: Option<usize>,
    kv: KvPrecision,
    total: usize,
    /// Conv taps (`taps` rows of the qkv width) and the q and k norm gains.
    conv: Vec<f32>,
    q_gain: Vec<f32>,
    k_gain: Vec<f32>,
    /// Per token: the raw `[q | k | v]` projections, the gate, the RoPE angles.
    raw: Vec<f32>,
    gate: Vec<f32>,
    cos: Vec<f32>,
    sin: Vec<f32>,
}

/// Where [`AttentionCase::record`] put its inputs and output.
struct AttentionAt {
    raw: u32,
    gate: u32,
}

impl AttentionCase {
    /// The CPU's gated output of every token: `Attention::token`, then the gate `attend`
    /// applies (`o · sigmoid(g)`).
    fn cpu(&self) -> Vec<f32> {
        let h = &self.h;
        let (width, od, half) = (h.qkv_width(), h.heads * h.v, h.qk / 2);
        let levels = levels(CqWidth::B4);
        let unused = CqMatrix::from_parts(1, 16, 16, CqWidth::B4, &[0; 8], &[0; 2], &levels);
        let unused = unused.unwrap();
        let attn = Attention {
            q_proj: unused,
            k_proj: unused,
            v_proj: unused,
            gate_proj: unused,
            out_proj: unused,
            taps: self.conv.clone(),
            q_gain: self.q_gain.clone(),
            k_gain: self.k_gain.clone(),
        };
        let mut ring = KvRing::new(self.kv, self.total, h.kv_heads, h.qk, h.v);
        let mut tail = ConvTail::new(self.taps, width);
        let mut s = AttnScratch::new(h);
        ring.reserve(self.total);
        s.reserve(self.total);
        let mut out = vec![0.0f32; self.total * od];
        for (p, o) in out.chunks_exact_mut(od).enumerate() {
            let (raw, cos, sin) = (
                row(&self.raw, 0, p, width),
                row(&self.cos, 0, p, half),
                row(&self.sin, 0, p, half),
            );
            attn.token(h, self.window, &mut ring, &mut tail, p, raw, cos, sin, &mut s, o);
            for (o, g) in o.iter_mut().zip(row(&self.gate, 0, p, od)) {
                *o /= 1.0 + (-g).exp();
            }
        }
        out
    }

    /// attention.wgsl's dispatches as `stages.rs` records them for chunks of up to `b` tokens,
    /// over one ring of `total` positions; the gated output is the readback.
    fn record(&self, b: usize, w: &mut Weights<'_>) -> (Recorded, AttentionAt) {
        let h = &self.h;
        let (width, od, half, taps) = (h.qkv_width(), h.heads * h.v, h.qk / 2, self.taps);
        let int8 = self.kv == KvPrecision::Int8;
        let (kw, vw) = if int8 { (h.qk / 4, h.v / 4) } else { (h.qk, h.v) };
        let entries = self.total * h.kv_heads;
        let scales = if int8 { entries } else { 0 };
        let (st, state_len) =
            regions(1, [entries * kw, entries * vw, scales, scales, (taps - 1) * width]);
        let [keys, values, key_scales, value_scales, conv_tail] = st;
        let (at, act_len) = regions(b, [width, od, width, od, half, half]);
        let [raw, gate, qkv, o, cos, sin] = at;
        let (taps_at, qg, kg) =
            (w.floats(&self.conv), w.floats(&self.q_gain), w.floats(&self.k_gain));
        let k = |v: usize| P::U(v as u32);
        let window = k(self.window.unwrap_or(0));
        let mut prog = Program::default();
        let conv = [
            P::U(raw),
            k(width),
            P::U(taps_at),
            k(taps),
            window,
            P::U(conv_tail),
            k(taps - 1),
            P::U(qkv),
        ];
        prog.push(Kernel::QkvConv, width, Scope::Chunk, &conv);
        let tail = [P::U(raw), k(width), k(width), P::U(conv_tail), k(taps - 1)];
        prog.push(Kernel::TailWrite, width, Scope::Chunk, &tail);
        let (heads, kvh) = (k(h.heads), k(h.kv_heads));
        let norm_rope = [
            P::U(qkv),
            k(width),
            k(h.qk),
            heads,
            kvh,
            P::U(qg),
            P::U(kg),
            P::U(cos),
            P::U(sin),
            P::F(EPS),
        ];
        prog.push(Kernel::QkNormRope, h.heads + h.kv_heads, Scope::Chunk, &norm_rope);
        let ring = [
            P::U(qkv),
            k(width),
            k(h.qk),
            k(h.v),
            heads,
            kvh,
            k(self.total),
            P::U(keys),
            P::U(values),
            P::U(key_scales),
            P::U(value_scales),
            k(usize::from(int8)),
        ];
        prog.push(Kernel::KvWrite, h.kv_heads, Scope::Chunk, &ring);
        let mut attend = ring.to_vec();
        attend.extend_from_slice(&[
            window,
            P::F(h.q_factor),
            P::F(h.score_factor),
            P::U(o),
            P::U(gate),
        ]);
        prog.push(
            Kernel::Attend,
            h.heads * super::device::WORKGROUP as usize,
            Scope::Chunk,
            &attend,
        );
        let regions = Regions { logits: o, cos, sin, ..Regions::default() };
        let rec = Recorded { program: prog, regions, act_len, state_len, ids_len: HEADER + b, b };
        (rec, AttentionAt { raw, gate })
    }

    /// The GPU's gated output of every token, run in `chunks`.
    fn gpu(&self, chunks: &[usize]) -> Vec<f32> {
        let h = &self.h;
        let (width, od, half) = (h.qkv_width(), h.heads * h.v, h.qk / 2);
        let mut w = Weights::new(&[]);
        let b = chunks.iter().copied().max().unwrap_or(1);
        let (rec, at) = self.record(b, &mut w);
        let inputs = [(at.raw, &self.raw[..], width), (at.gate, &self.gate[..], od)];
        let angles = Some((&self.cos[..], &self.sin[..], half));
        run_chunks(rec, &w, od, chunks, &inputs, angles)
    }
}

/// Runs `rec` over the tokens in `chunks` from position 0, uploading each chunk's rows of
/// every `(region, rows, width)` input (and of the RoPE angles, `half` a token); reads back
/// `out_len` floats a token.
fn run_chunks(
    rec: Recorded,
    w: &Weights<'_>,
    out_len: usize,
    chunks: &[usize],
    inputs: &[(u32, &[f32], usize)],
    angles: Option<(&[f32], &[f32], usize)>,
) -> Vec<f32> {
    let gpu = Gpu::new().unwrap();
    let runner =
        Runner::new(gpu, rec, w.code_words(), &w.floats, out_len, (0, 0), GpuKernels::Plain)
            .unwrap();
    let mut got = vec![0.0f32; chunks.iter().sum::<usize>() * out_len];
    let mut pos = 0;
    for &n in chunks {
        for &(at, rows, width) in inputs {
            let chunk = bytes(&rows[pos * width..(pos + n) * width]);
            runner.gpu.queue.write_buffer(&runner.act, 4 * u64::from(at), &chunk);
        }
        let (cos, sin) = match angles {
            Some((cos, sin, half)) => {
                (&cos[pos * half..(pos + n) * half], &sin[pos * half..(pos + n) * half])
            }
            None => (&[][..], &[][..]),
        };
        let ids: Vec<u32> = (0..n as u32).collect();
        let c = ChunkInputs { ids: &ids, pos, cos, sin, slots: &[], head_first: Some(0) };
        let out = &mut got[pos * out_len..(pos + n) * out_len];
        runner.run_chunk(&c, out, &mut []).unwrap();
        pos += n;
    }
    got
}

/// attention.wgsl as `stages.rs` records it (`qkv_conv` with its `tail_write`, `qk_norm_rope`,
/// `kv_write`, `attend`) against `Attention::token`: 6 tokens in chunks of 4 and 2 (the second
/// reads the first's conv tail and ring), 3 conv taps, grouped heads (4 on 2 kv heads, q/k 8,
/// v 16), f32 and int8 KV, no window and a window of 3.
#[test]
fn attention_with_its_conv_norms_and_rope_equals_the_cpu_attention_over_two_chunks() {
    if !super::adapter_or_skip() {
        return;
    }
    let h = Heads::new(4, 2, 8, 16);
    let (taps, total) = (3usize, 6usize);
    let gains = |seed| pseudo_random(h.qk, seed).iter().map(|g| 1.0 + g / 4.0).collect();
    for kv in [KvPrecision::F32, KvPrecision::Int8] {
        for window in [None, Some(3)] {
            let case = AttentionCase {
                h,
                taps,
                window,
                kv,
                total,
                conv: pseudo_random(taps * h.qkv_width(), 35),
                q_gain: gains(36),
                k_gain: gains(37),
                raw: pseudo_random(total * h.qkv_width(), 31),
                gate: pseudo_random(total * h.heads * h.v, 32),
                cos: pseudo_random(total * h.qk / 2, 33),
                sin: pseudo_random(total * h.qk / 2, 34),
            };
            let what = std::format!("attention, {kv:?} KV, window {window:?}");
            close(&case.gpu(&[4, 2]), &case.cpu(), &what);
        }
    }
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// engram.wgsl (`engram_gate`, `engram_conv` with the value tail's `tail_write`; the last
/// site's conv adds the sites' sum into `x`) as `stages.rs` records a block's sites, against
/// the CPU's `gate` and `Site::conv` summed as `blocks/stages.rs` does: two sites, 6 tokens in
/// chunks of 4 and 2 (the second reads the first's tails), 3 taps 2 positions apart.
#[test]
fn engram_sites_equal_the_cpu_gate_and_dilated_conv_over_two_chunks() {
    if !super::adapter_or_skip() {
        return;
    }
    let (d, b, total, taps, dilation) = (24usize, 4usize, 6usize, 3usize, 2usize);
    let g = EngramGeometry {
        d_model: d,
        slots: 1,
        sub_dim: 1,
        tables: 1,
        conv_taps: taps,
        conv_dilation: dilation,
        seed_heads: 0,
        orders: vec![2],
    };
    let tail_slots = (taps - 1) * dilation;
    let x = pseudo_random(total * d, 51);
    let keys = [pseudo_random(total * d, 52), pseudo_random(total * d, 53)];
    let values = [pseudo_random(total * d, 54), pseudo_random(total * d, 55)];
    let site_taps = [pseudo_random(taps * d, 56), pseudo_random(taps * d, 57)];

    let levels = levels(CqWidth::B4);
    let unused = CqMatrix::from_parts(1, 16, 16, CqWidth::B4, &[0; 8], &[0; 2], &levels).unwrap();
    let sites = site_taps.clone().map(|taps| Site {
        layer: 0,
        tables: unused,
        key_proj: unused,
        value_proj: unused,
        taps,
    });
    let mut tails = [ValueTail::new(&g, total), ValueTail::new(&g, total)];
    let mut want = x.clone();
    let (mut conv, mut nx, mut nk) = (vec![0.0f32; d], vec![0.0f32; d], vec![0.0f32; d]);
    for p in 0..total {
        let mut contrib = vec![0.0f32; d];
        for (si, (site, tail)) in sites.iter().zip(&mut tails).enumerate() {
            site.conv(tail, p, row(&values[si], 0, p, d), &mut conv);
            let alpha = engram::gate(row(&x, 0, p, d), row(&keys[si], 0, p, d), &mut nx, &mut nk);
            for (c, &v) in contrib.iter_mut().zip(&conv) {
                *c = if si == 0 { alpha * v } else { *c + alpha * v };
            }
        }
        for (o, c) in row_mut(&mut want, 0, p, d).iter_mut().zip(contrib) {
            *o += c;
        }
    }

    let (at, act_len) = regions(b, [d, d, d, d, d, 1, d]);
    let [x_at, k0, v0, k1, v1, alpha, contrib] = at;
    let (st, state_len) = regions(1, [tail_slots * d, tail_slots * d]);
    let mut w = Weights::new(&[]);
    let k = |v: usize| P::U(v as u32);
    let mut prog = Program::default();
    for (si, (key, value)) in [(k0, v0), (k1, v1)].into_iter().enumerate() {
        let gate = [P::U(x_at), P::U(key), k(d), P::U(alpha), P::F(EPS)];
        prog.push(Kernel::EngramGate, 1, Scope::Chunk, &gate);
        let conv = [
            P::U(value),
            k(d),
            P::U(w.floats(&site_taps[si])),
            k(taps),
            k(dilation),
            P::U(st[si]),
            k(tail_slots),
            P::U(alpha),
            P::U(contrib),
            k(usize::from(si == 0)),
            P::U(if si == 1 { x_at } else { u32::MAX }),
        ];
        prog.push(Kernel::EngramConv, d, Scope::Chunk, &conv);
        let tail = [P::U(value), k(d), k(d), P::U(st[si]), k(tail_slots)];
        prog.push(Kernel::TailWrite, d, Scope::Chunk, &tail);
    }
    let regions = Regions { logits: x_at, ..Regions::default() };
    let rec = Recorded { program: prog, regions, act_len, state_len, ids_len: HEADER + b, b };
    let inputs = [
        (x_at, &x[..], d),
        (k0, &keys[0][..], d),
        (v0, &values[0][..], d),
        (k1, &keys[1][..], d),
        (v1, &values[1][..], d),
    ];
    let got = run_chunks(rec, &w, d, &[4, 2], &inputs, None);
    close(&got, &want, "Engram sites");
}

/// The MLP family (mlp.wgsl's `cond_logits`, `mlp_in`, `kron_right`, `kron_left`, `mlp_mid`,
/// `mlp_out`, as `mlp::record` records them) over the tokens of `x` (`d` floats each) against
/// the CPU's `Mlp::forward` of the same MLP; a generation calls it with its own MLPs
/// (`v3/gpu.rs`). The residual and block input stay zero, so `y` is the MLP's output alone.
pub(crate) fn check_mlp<M: GpuMlp>(mlp: &M, shared: &M::Shared, x: &[f32], d: usize) {
    let m = mlp.hadamard();
    let (b, n) = (x.len() / d, m.d1.len());
    let (at, len) = regions(b, [d, d, d, n, n, n, n, m.rank.max(1)]);
    let [normed, out, u, cond, z, tmp, mu, lg] = at;
    let mut w = Weights::new(&[]);
    let mut prog = Program::default();
    let regions = MlpRegions { normed, x: out, u, cond, z, tmp, mu, lg, d };
    mlp::record(&mut prog, &mut w, &m, M::permutations(shared), &regions);
    let got = run(GpuKernels::Plain, &w, prog, len, x, b, out, d);
    let mut scratch = M::scratch(core::iter::once(mlp));
    let mut want = vec![0.0f32; b * d];
    for (xt, wt) in x.chunks_exact(d).zip(want.chunks_exact_mut(d)) {
        mlp.forward(shared, xt, &mut scratch, wt);
    }
    close(&got, &want, "the MLP");
}

/// mlp.wgsl `post_residual` against `blocks::stages::post_residual`: 3 tokens of 40, the gate
/// neither 0 nor 1.
#[test]
fn post_residual_equals_the_cpu_residual_and_mlp_norm() {
    if !super::adapter_or_skip() {
        return;
    }
    let (b, d, gate) = (3usize, 40usize, 0.35f32);
    let (at, len) = regions(b, [d, d, d]);
    let [h, x, normed] = at;
    let mut input = pseudo_random(normed as usize, 31);
    input.resize(len, 0.0);
    let (post_norm, pre_hada) = (pseudo_random(d, 32), pseudo_random(d, 33));
    let mut w = Weights::new(&[]);
    let (pn, ph) = (w.floats(&post_norm), w.floats(&pre_hada));
    let mut prog = Program::default();
    let p =
        [P::U(h), P::U(x), P::U(normed), P::U(d as u32), P::U(pn), P::U(ph), P::F(gate), P::F(EPS)];
    prog.push(Kernel::PostResidual, 1, Scope::Chunk, &p);
    let got = run(GpuKernels::Plain, &w, prog, len, &input, b, 0, len / b);

    let mut want = input.clone();
    for t in 0..b {
        let (mut xt, mut nt) = (row(&input, x, t, d).to_vec(), vec![0.0f32; d]);
        let ht = row(&input, h, t, d);
        crate::blocks::stages::post_residual(ht, &post_norm, gate, &pre_hada, &mut xt, &mut nt);
        row_mut(&mut want, x, t, d).copy_from_slice(&xt);
        row_mut(&mut want, normed, t, d).copy_from_slice(&nt);
    }
    close(&got, &want, "post_residual");
}
