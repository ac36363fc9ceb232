//! The CQ kernels on the GPU against their CPU twins, at every code width (1, 2, 3 bits cross
//! word boundaries, ternary crumbs), groups 16 and 64, padded columns: `rotate` + `matmul`
//! (and the tiled variant's `matvec_tiled`, `matmul_tiled`) against `CqMatrix::matvec`, `gather_rows` against `dequant_row`; `kv_write` + `attend`
//! against the CPU's KV ring (f32 and int8). Skips where no adapter exists
//! (`super::adapter_or_skip`).
use std::vec;
use std::vec::Vec;

use super::device::{Gpu, Kernel};
use super::program::{Program, Scope, P};
use super::runner::{ChunkInputs, Runner};
use super::stages::{Recorded, Regions, HEADER};
use super::weights::Weights;
use crate::blocks::kv::KvRing;
use crate::blocks::KvPrecision;
use crate::kernels::cq::{CqMatrix, CqWidth};
use crate::kernels::hadamard::orthonormal_scale;
use crate::kernels::test_util::{pseudo_random, pseudo_random_bytes};
use crate::session::GpuKernels;

const WIDTHS: [CqWidth; 5] = [CqWidth::B1, CqWidth::B2, CqWidth::B3, CqWidth::B4, CqWidth::Ternary];

/// A "container" of one matrix: its packed codes (ternary crumb 2 made 0) then FP16 norms.
fn blob(rows: usize, cp: usize, group: usize, width: CqWidth, seed: u32) -> (Vec<u8>, usize) {
    let mut packed = pseudo_random_bytes(rows * cp * width.code_bits() / 8, seed);
    if width == CqWidth::Ternary {
        for b in &mut packed {
            // A crumb of 2 (high bit set, low clear) becomes 0.
            *b &= !(((*b >> 1) & !*b & 0x55) << 1);
        }
    }
    let n = packed.len();
    let norms = (0..rows * cp / group).flat_map(|i| [(i * 37 % 251) as u8, 0x38 + (i % 5) as u8]);
    packed.extend(norms);
    (packed, n)
}

pub(super) fn levels(width: CqWidth) -> Vec<f32> {
    (0..width.header_levels()).map(|i| (i as f32 - 7.5) / 16.0).collect()
}

/// Runs `program` on the `kernels` variant over `b` tokens with `x` at activation offset 0;
/// reads `out_len` floats back from `out` a token.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    kernels: GpuKernels,
    w: &Weights<'_>,
    program: Program,
    act_len: usize,
    x: &[f32],
    b: usize,
    out: u32,
    out_len: usize,
) -> Vec<f32> {
    run_with_state(kernels, w, program, act_len, 1, x, b, out, out_len)
}

/// [`run`] with a sequence state of `state_len` words.
#[allow(clippy::too_many_arguments)]
fn run_with_state(
    kernels: GpuKernels,
    w: &Weights<'_>,
    program: Program,
    act_len: usize,
    state_len: usize,
    x: &[f32],
    b: usize,
    out: u32,
    out_len: usize,
) -> Vec<f32> {
    let rec = Recorded {
        program,
        regions: Regions { logits: out, ..Regions::default() },
        act_len,
        state_len,
        ids_len: HEADER + b,
        b,
    };
    let gpu = Gpu::new().unwrap();
    let runner =
        Runner::new(gpu, rec, w.code_words(), &w.floats, out_len, (0, 0), kernels).unwrap();
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    runner.gpu.queue.write_buffer(&runner.act, 0, &bytes);
    let ids: Vec<u32> = (0..b as u32).collect();
    let c = ChunkInputs { ids: &ids, pos: 0, cos: &[], sin: &[], slots: &[], head_first: Some(0) };
    let mut got = vec![0.0f32; b * out_len];
    runner.run_chunk(&c, &mut got, &mut []).unwrap();
    got
}

pub(super) fn close(got: &[f32], want: &[f32], what: &str) {
    let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-30);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5 * scale, "{what} [{i}]: gpu {g} cpu {w}");
    }
}

/// Every variant: `plain`'s `matmul`; `tiled`'s `matvec_tiled` (one token) and `matmul_tiled`
/// (3 tokens: one partial tile; 70: two token tiles); `subgroup`'s `matvec_subgroup` (one
/// token; where the adapter offers subgroups), over 37 rows (a partial row block and row tile)
/// and inputs whose padded width is not a whole number of slices (48).
#[test]
fn rotate_and_matmul_equal_the_cpu_matvec_at_every_width_in_every_variant() {
    if !super::adapter_or_skip() {
        return;
    }
    let rows = 37;
    let subgroups = super::subgroups_or_skip();
    for (kernels, b) in [
        (GpuKernels::Plain, 3),
        (GpuKernels::Tiled, 1),
        (GpuKernels::Tiled, 3),
        (GpuKernels::Tiled, 70),
        (GpuKernels::Subgroup, 1),
    ] {
        if kernels == GpuKernels::Subgroup && !subgroups {
            continue;
        }
        for width in WIDTHS {
            for (group, cols) in [(16usize, 40usize), (64, 128), (64, 72)] {
                let cp = cols.div_ceil(group) * group;
                let (bytes, n) = blob(rows, cp, group, width, 7 + cols as u32);
                let (packed, norms) = bytes.split_at(n);
                let m =
                    CqMatrix::from_parts(rows, cols, group, width, packed, norms, &levels(width))
                        .unwrap();
                let x = pseudo_random(b * cols, cols as u32);
                let mut w = Weights::new(&bytes);
                let c = w.cq(&m).unwrap();
                let (rot, out) = ((b * cols) as u32, (b * cols + b * cp) as u32);
                let mut prog = Program::default();
                let scale = orthonormal_scale(group);
                let p = [
                    P::U(0),
                    P::U(cols as u32),
                    P::U(cols as u32),
                    P::U(cp as u32),
                    P::U(group as u32),
                    P::U(rot),
                    P::F(scale),
                ];
                prog.push(Kernel::Rotate, cp / group, Scope::Chunk, &p);
                let mut p: Vec<P> = c.words.iter().map(|&v| P::U(v)).collect();
                p.extend_from_slice(&[P::U(rot), P::U(out), P::U(rows as u32)]);
                prog.push(Kernel::Matmul, rows, Scope::Chunk, &p);
                let act_len = b * (cols + cp + rows);
                let got = run(kernels, &w, prog, act_len, &x, b, out, rows);
                let mut want = vec![0.0f32; b * rows];
                let mut scratch = vec![0.0f32; cp];
                for t in 0..b {
                    m.matvec(
                        &x[t * cols..(t + 1) * cols],
                        &mut scratch,
                        &mut want[t * rows..(t + 1) * rows],
                    );
                }
                let what = std::format!("{kernels:?} b {b} {width:?} group {group} cols {cols}");
                close(&got, &want, &what);
            }
        }
    }
}

/// `rotate` with the RMS norm fused in (no gain, and a gain) then `matmul`, against the CPU's
/// `rms_unit` / `rms_norm` then `CqMatrix::matvec`.
#[test]
fn a_norm_fused_into_the_rotation_equals_the_cpu_norm_then_matvec() {
    if !super::adapter_or_skip() {
        return;
    }
    let (rows, b, group, cols, eps) = (13usize, 3usize, 64usize, 72usize, 1e-6f32);
    let cp = cols.div_ceil(group) * group;
    let (bytes, n) = blob(rows, cp, group, CqWidth::B4, 5);
    let (packed, norms) = bytes.split_at(n);
    let m =
        CqMatrix::from_parts(rows, cols, group, CqWidth::B4, packed, norms, &levels(CqWidth::B4))
            .unwrap();
    let x = pseudo_random(b * cols, 9);
    let gain: Vec<f32> = pseudo_random(cols, 10).iter().map(|g| 1.0 + g).collect();
    for with_gain in [false, true] {
        let mut w = Weights::new(&bytes);
        let c = w.cq(&m).unwrap();
        let gain_at = if with_gain { w.floats(&gain) } else { u32::MAX };
        let (rot, out) = ((b * cols) as u32, (b * cols + b * cp) as u32);
        let mut prog = Program::default();
        let p = [
            P::U(0),
            P::U(cols as u32),
            P::U(cols as u32),
            P::U(cp as u32),
            P::U(group as u32),
            P::U(rot),
            P::F(orthonormal_scale(group)),
            P::U(1),
            P::U(gain_at),
            P::F(eps),
        ];
        prog.push(Kernel::Rotate, cp / group, Scope::Chunk, &p);
        let mut p: Vec<P> = c.words.iter().map(|&v| P::U(v)).collect();
        p.extend_from_slice(&[P::U(rot), P::U(out), P::U(rows as u32)]);
        prog.push(Kernel::Matmul, rows, Scope::Chunk, &p);
        let act_len = b * (cols + cp + rows);
        let got = run(GpuKernels::Plain, &w, prog, act_len, &x, b, out, rows);
        let mut want = vec![0.0f32; b * rows];
        let (mut normed, mut scratch) = (vec![0.0f32; cols], vec![0.0f32; cp]);
        for t in 0..b {
            let xt = &x[t * cols..(t + 1) * cols];
            if with_gain {
                crate::kernels::norm::rms_norm(xt, &gain, eps, &mut normed);
            } else {
                crate::kernels::norm::rms_unit(xt, eps, &mut normed);
            }
            m.matvec(&normed, &mut scratch, &mut want[t * rows..(t + 1) * rows]);
        }
        close(&got, &want, &std::format!("norm fused, gain {with_gain}"));
    }
}

#[test]
fn gathered_rows_equal_the_cpu_dequantised_rows_at_every_width() {
    if !super::adapter_or_skip() {
        return;
    }
    let rows = 11;
    for width in WIDTHS {
        for (group, cols) in [(16usize, 40usize), (64, 72)] {
            let cp = cols.div_ceil(group) * group;
            let (bytes, n) = blob(rows, cp, group, width, 3 + cols as u32);
            let (packed, norms) = bytes.split_at(n);
            let m = CqMatrix::from_parts(rows, cols, group, width, packed, norms, &levels(width))
                .unwrap();
            let mut w = Weights::new(&bytes);
            let c = w.cq(&m).unwrap();
            // Tokens are the row ids (the chunk's ids stand in for the embedding's).
            let b = rows;
            let mut p: Vec<P> = c.words[..6].iter().map(|&v| P::U(v)).collect();
            let times = 1.5f32;
            p.extend_from_slice(&[
                P::U(cols as u32),
                P::U(HEADER as u32),
                P::U(1),
                P::U(0),
                P::U(0),
                P::U(cols as u32),
                P::U(c.words[7]),
                P::F(orthonormal_scale(group)),
                P::F(times),
            ]);
            let mut prog = Program::default();
            prog.push(Kernel::GatherRows, cp / group, Scope::Chunk, &p);
            let got = run(GpuKernels::Plain, &w, prog, b * cols, &[], b, 0, cols);
            let mut want = vec![0.0f32; b * cols];
            for r in 0..rows {
                m.dequant_row(r, &mut want[r * cols..(r + 1) * cols]);
            }
            let want: Vec<f32> = want.iter().map(|v| v * times).collect();
            close(&got, &want, &std::format!("{width:?} group {group} cols {cols}"));
        }
    }
}

/// `attend`'s answer from the CPU twin: each token written into a [`KvRing`] of `kv` (the
/// CPU's int8 rounding of keys, values and the query), then its scores, a plain two-pass
/// softmax and the value mix, gated.
#[allow(clippy::too_many_arguments)]
fn cpu_attend(
    kv: KvPrecision,
    qkv: &[f32],
    gate: &[f32],
    (b, heads, kvh, qk, vw): (usize, usize, usize, usize, usize),
    window: usize,
    qf: f32,
    sf: f32,
) -> Vec<f32> {
    let width = heads * qk + kvh * qk + kvh * vw;
    let mut ring = KvRing::new(kv, b, kvh, qk, vw);
    ring.reserve(b);
    let mut want = vec![0.0f32; b * heads * vw];
    let mut q8 = vec![0i8; qk];
    for t in 0..b {
        let row = &qkv[t * width..(t + 1) * width];
        ring.write(t, &row[heads * qk..(heads + kvh) * qk], &row[(heads + kvh) * qk..]);
        let first = if window > 0 { (t + 1).saturating_sub(window) } else { 0 };
        for hd in 0..heads {
            let mut q = row[hd * qk..(hd + 1) * qk].to_vec();
            let mut w = vec![0.0f32; t + 1 - first];
            let h = hd / (heads / kvh);
            ring.scores(&mut q, &mut q8, h, first, qf, sf, &mut w);
            let top = w.iter().fold(f32::MIN, |m, &s| m.max(s));
            w.iter_mut().for_each(|s| *s = (*s - top).exp());
            let sum: f32 = w.iter().sum();
            w.iter_mut().for_each(|s| *s /= sum);
            let out = &mut want[(t * heads + hd) * vw..(t * heads + hd + 1) * vw];
            ring.mix(&w, h, first, out);
            for (o, g) in out.iter_mut().zip(&gate[(t * heads + hd) * vw..]) {
                *o /= 1.0 + (-g).exp();
            }
        }
    }
    want
}

/// `kv_write` then `attend` against the CPU's KV ring, f32 and int8 (codes four to a word, one
/// scale per position and kv head, the query rounded as upstream does): 70 tokens from
/// position 0 (so later tokens attend over two tiles of 64 keys, the online softmax rescaling
/// between them), 80 value channels (two a lane for some lanes), grouped heads (4 query heads
/// on 2 kv heads), and a window of 50 on a second run.
#[test]
fn attend_equals_the_cpu_kv_ring_over_tiles_and_wide_values_f32_and_int8() {
    if !super::adapter_or_skip() {
        return;
    }
    let dims @ (b, heads, kvh, qk, vw) = (70usize, 4usize, 2usize, 8usize, 80usize);
    let width = heads * qk + kvh * qk + kvh * vw;
    let (qf, sf) = (0.5f32, 0.7f32);
    let qkv = pseudo_random(b * width, 11);
    let gate = pseudo_random(b * heads * vw, 12);
    let (gate_at, out_at) = ((b * width) as u32, (b * width + b * heads * vw) as u32);
    let act_len = b * width + 2 * b * heads * vw;
    let x: Vec<f32> = qkv.iter().chain(&gate).copied().collect();
    for kv in [KvPrecision::F32, KvPrecision::Int8] {
        for window in [0usize, 50] {
            let slots = b;
            let int8 = kv == KvPrecision::Int8;
            let (kw, vws) = if int8 { (qk / 4, vw / 4) } else { (qk, vw) };
            let entries = slots * kvh;
            let (keys_at, values_at) = (0u32, (entries * kw) as u32);
            let key_scales = values_at + (entries * vws) as u32;
            let value_scales = key_scales + entries as u32;
            let state_len = entries * (kw + vws + 2);
            let ring = [
                P::U(0),
                P::U(width as u32),
                P::U(qk as u32),
                P::U(vw as u32),
                P::U(heads as u32),
                P::U(kvh as u32),
                P::U(slots as u32),
                P::U(keys_at),
                P::U(values_at),
                P::U(key_scales),
                P::U(value_scales),
                P::U(u32::from(int8)),
            ];
            let mut prog = Program::default();
            prog.push(Kernel::KvWrite, kvh, Scope::Chunk, &ring);
            let mut attend = ring.to_vec();
            attend.extend_from_slice(&[
                P::U(window as u32),
                P::F(qf),
                P::F(sf),
                P::U(out_at),
                P::U(gate_at),
            ]);
            let per_token = heads * super::device::WORKGROUP as usize;
            prog.push(Kernel::Attend, per_token, Scope::Chunk, &attend);
            let mut w = Weights::new(&[]);
            w.floats(&[0.0]);
            let got = run_with_state(
                GpuKernels::Plain,
                &w,
                prog,
                act_len,
                state_len,
                &x,
                b,
                out_at,
                heads * vw,
            );
            let want = cpu_attend(kv, &qkv, &gate, dims, window, qf, sf);
            close(&got, &want, &std::format!("attend, {kv:?} KV, window {window}"));
        }
    }
}
