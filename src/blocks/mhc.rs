//! Manifold-constrained hyper-connections (mHC): the residual stream is `n` lanes of width
//! `d_model`, and each block reads, writes and mixes them with token-dependent coefficients
//! (upstream's `_ScanBody.advance`):
//!
//! ```text
//! nx    = rms_unit(all lanes flattened)                       (A8 in deploy numerics)
//! hpre  = sigmoid(a_pre · nx·φ_pre + b_pre + pre_off)         block input u = Σ_i hpre_i lane_i
//! hpost = 2 sigmoid(a_post · nx·φ_post + b_post + post_off)
//! hres  = sinkhorn(a_res · nx·φ_res + b_res)                  (n x n, doubly stochastic)
//! lane_i <- Σ_j hres_ij lane_j + hpost_i · (block(u) - u)
//! ```
//!
//! The offsets favour one lane per block, cycling with the block's position in the stack
//! being run (so a Needle 3 depth rung renumbers them): `pre_off` is +4 on that lane and -4
//! elsewhere, `post_off` 0 on it and -4 elsewhere. Needle 2 and Needle 3 share all of it; only
//! Needle 3's deploy numerics round `nx` to int8.
use alloc::vec::Vec;

use super::tensors::{cq, floats};
use super::{sigmoid, EPS};
use crate::container::{Codebooks, MhcTensors};
use crate::kernels::sinkhorn::sinkhorn;
use crate::kernels::{rms_unit, CqMatrix};
use crate::Result;

/// One layer's mHC coefficients: the rows of the three stacked `φ` matrices that belong to it.
pub(crate) struct MhcLayer<'a> {
    pub(crate) phi_pre: CqMatrix<'a>,
    pub(crate) phi_post: CqMatrix<'a>,
    pub(crate) phi_res: CqMatrix<'a>,
    pub(crate) a_pre: f32,
    pub(crate) a_post: f32,
    pub(crate) a_res: f32,
    pub(crate) b_pre: Vec<f32>,
    pub(crate) b_post: Vec<f32>,
    pub(crate) b_res: Vec<f32>,
}

/// Every layer's [`MhcLayer`], from the container's stacked mHC tensors.
pub(crate) fn load<'a>(
    t: &MhcTensors<'a>,
    cbs: &Codebooks,
    layers: usize,
    lanes: usize,
    d_model: usize,
) -> Result<Vec<MhcLayer<'a>>> {
    let width = lanes * d_model;
    let phi_pre = cq(&t.phi_pre, cbs, layers * lanes, width)?;
    let phi_post = cq(&t.phi_post, cbs, layers * lanes, width)?;
    let phi_res = cq(&t.phi_res, cbs, layers * lanes * lanes, width)?;
    let a_pre = floats(&t.a_pre, layers)?;
    let a_post = floats(&t.a_post, layers)?;
    let a_res = floats(&t.a_res, layers)?;
    let b_pre = floats(&t.b_pre, layers * lanes)?;
    let b_post = floats(&t.b_post, layers * lanes)?;
    let b_res = floats(&t.b_res, layers * lanes * lanes)?;
    let (n, nn) = (lanes, lanes * lanes);
    // A plain loop: collecting into a `Result` brings a copy of core's `GenericShunt`.
    let mut out = Vec::new();
    for l in 0..layers {
        out.push(MhcLayer {
            phi_pre: phi_pre.row_block(l * n, n)?,
            phi_post: phi_post.row_block(l * n, n)?,
            phi_res: phi_res.row_block(l * nn, nn)?,
            a_pre: a_pre[l],
            a_post: a_post[l],
            a_res: a_res[l],
            b_pre: b_pre[l * n..(l + 1) * n].to_vec(),
            b_post: b_post[l * n..(l + 1) * n].to_vec(),
            b_res: b_res[l * nn..(l + 1) * nn].to_vec(),
        });
    }
    Ok(out)
}

/// The coefficient input of one token: the whole stream RMS-normalised (Needle 3's deploy
/// numerics then apply the `φ` matrices to its int8 round trip).
pub(crate) fn mix_input(stream: &[f32], nx: &mut [f32]) {
    rms_unit(stream, EPS, nx);
}

impl MhcLayer<'_> {
    /// Turns one token's raw `nx·φ` products into coefficients, in place: `pre` and `post` (n
    /// each) become `hpre` and `hpost`, `res` (n x n) becomes `hres`. `lane` is the favoured lane.
    pub(crate) fn coefficients(
        &self,
        lane: usize,
        pre: &mut [f32],
        post: &mut [f32],
        res: &mut [f32],
    ) {
        let n = pre.len();
        for j in 0..n {
            let (pre_off, post_off) = if j == lane { (4.0, 0.0) } else { (-4.0, -4.0) };
            pre[j] = sigmoid(self.a_pre * pre[j] + self.b_pre[j] + pre_off);
            post[j] = 2.0 * sigmoid(self.a_post * post[j] + self.b_post[j] + post_off);
        }
        for (r, &b) in res.iter_mut().zip(&self.b_res) {
            *r = self.a_res * *r + b;
        }
        sinkhorn(res, n);
    }
}

/// Block input `u = Σ_i hpre_i lane_i` for one token.
pub(crate) fn collapse(stream: &[f32], hpre: &[f32], u: &mut [f32]) {
    let d = u.len();
    u.fill(0.0);
    for (i, &h) in hpre.iter().enumerate() {
        for (o, &x) in u.iter_mut().zip(&stream[i * d..(i + 1) * d]) {
            *o += h * x;
        }
    }
}

/// `lane_i <- Σ_j hres_ij lane_j + hpost_i · y` for one token; `next` holds a stream's worth.
pub(crate) fn expand(stream: &mut [f32], hres: &[f32], hpost: &[f32], y: &[f32], next: &mut [f32]) {
    let (n, d) = (hpost.len(), y.len());
    for i in 0..n {
        let out = &mut next[i * d..(i + 1) * d];
        out.fill(0.0);
        for j in 0..n {
            let h = hres[i * n + j];
            for (o, &x) in out.iter_mut().zip(&stream[j * d..(j + 1) * d]) {
                *o += h * x;
            }
        }
        for (o, &v) in out.iter_mut().zip(y) {
            *o += hpost[i] * v;
        }
    }
    stream.copy_from_slice(&next[..n * d]);
}

/// The mean over lanes of one token's stream (upstream's `jnp.mean(x, axis=2)`).
pub(crate) fn lane_mean(stream: &[f32], out: &mut [f32]) {
    let d = out.len();
    let n = stream.len() / d;
    out.fill(0.0);
    for lane in stream.chunks_exact(d) {
        for (o, &x) in out.iter_mut().zip(lane) {
            *o += x;
        }
    }
    let inv = 1.0 / n as f32;
    for o in out.iter_mut() {
        *o *= inv;
    }
}
