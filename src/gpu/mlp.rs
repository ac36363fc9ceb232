//! The Walsh-Monarch MLP's dispatches (mlp.wgsl; its CPU twin is the generation's
//! `Mlp::forward`, Needle 3's `v3/mlp.rs`): the conditioning, three Kronecker stages around the
//! diagonals and the two permutations, then the block's output `y = x + mlp(normed) - u`.
use std::vec::Vec;

use super::device::Kernel;
use super::generation::Hadamard;
use super::program::{Program, Scope, P};
use super::weights::Weights;

/// The activation regions the MLP reads and writes (offsets in floats), and `d_model`.
pub(crate) struct MlpRegions {
    /// The MLP's input, `d` a token.
    pub(crate) normed: u32,
    /// The residual, which becomes the block's output `y`.
    pub(crate) x: u32,
    /// The block input, taken off `y`.
    pub(crate) u: u32,
    /// Scratch of `n` a token (`lg`: of the conditioning rank).
    pub(crate) cond: u32,
    pub(crate) z: u32,
    pub(crate) tmp: u32,
    pub(crate) mu: u32,
    pub(crate) lg: u32,
    pub(crate) d: usize,
}

/// Records the MLP `m` (with the model's permutations `perms`) over the regions `at`, its float
/// weights appended to `w`.
pub(crate) fn record(
    prog: &mut Program,
    w: &mut Weights<'_>,
    m: &Hadamard<'_>,
    perms: [&[u32]; 2],
    at: &MlpRegions,
) {
    let u = |v: usize| P::U(v as u32);
    let (d, n, rank) = (at.d, m.d1.len(), m.rank);
    let MlpRegions { normed, cond, z, tmp, mu, lg, .. } = *at;
    let cv = w.floats(m.cond_vt);
    let p = [normed.into(), u(d), cv.into(), u(rank), lg.into()];
    prog.push(Kernel::CondLogits, 1, Scope::Chunk, &p);
    let (cu, d1) = (w.floats(m.cond_u), w.floats(m.d1));
    let p = [
        normed.into(),
        u(d),
        u(n),
        lg.into(),
        u(rank),
        cu.into(),
        d1.into(),
        cond.into(),
        z.into(),
    ];
    prog.push(Kernel::MlpIn, n, Scope::Chunk, &p);
    let [p1, p2] = perms.map(|p| -> Vec<f32> {
        // The shaders read indices from the float buffer.
        p.iter().map(|&i| i as f32).collect()
    });
    for (si, stage) in m.stages.iter().enumerate() {
        let (fa, fb) = (w.floats(stage.fa), w.floats(stage.fb));
        let p = [z.into(), fb.into(), u(m.a), u(m.b), tmp.into()];
        prog.push(Kernel::KronRight, n, Scope::Chunk, &p);
        let p = [fa.into(), tmp.into(), u(m.a), u(m.b), mu.into()];
        prog.push(Kernel::KronLeft, n, Scope::Chunk, &p);
        let (diag, perm, first) = match si {
            0 => (m.d2, &p1, 1),
            1 => (m.d3, &p2, 0),
            _ => break,
        };
        let (dg, pm, b2) = (w.floats(diag), w.floats(perm), w.floats(m.b2));
        let p = [mu.into(), u(n), dg.into(), pm.into(), z.into(), cond.into(), b2.into(), u(first)];
        prog.push(Kernel::MlpMid, n, Scope::Chunk, &p);
    }
    let d4 = w.floats(m.d4);
    let p = [mu.into(), u(n), d4.into(), at.x.into(), at.u.into(), u(d)];
    prog.push(Kernel::MlpOut, d, Scope::Chunk, &p);
}
