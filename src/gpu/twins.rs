//! Kernel families on the GPU against their CPU twins in `blocks/`, one test per family, each
//! kernel alone over a chunk of several tokens (the CQ and attention kernels: `tests.rs`).
//! Skips where no adapter exists (`super::adapter_or_skip`).
use std::vec;

use super::device::Kernel;
use super::program::{Program, Scope, P};
use super::tests::{close, levels, run};
use super::weights::Weights;
use crate::blocks::mhc::{self, MhcLayer};
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
