//! The Walsh-Monarch ("Hadamard") MLP that replaces a dense feed-forward block (upstream's
//! `HadamardMLP`).
//!
//! With `n = hada_n` (d_model rounded up to a power of two) and `n = a * b`, each of three
//! stages mixes the (zero-padded) vector viewed as an `a x b` matrix `Z` by two small factors,
//! `Z -> Aᵀ Z B` (upstream's `_kron_apply`), around element-wise diagonals:
//!
//! ```text
//! cond = 1 + softmax(x · cond_v) · cond_u            (rank-8 input-dependent gain)
//! z = stage1(d1 ⊙ pad(x))[p1]
//! z = stage2(silu(d2 ⊙ cond ⊙ z + b2))[p2]
//! out = (d4 ⊙ stage3(d3 ⊙ z))[..d_model]
//! ```
//!
//! `p1` and `p2` are fixed permutations (the container's `hada_p1`/`hada_p2`): `z[p][i] = z[p[i]]`.
use alloc::vec;
use alloc::vec::Vec;

use crate::blocks::stack::Mlp;
use crate::blocks::tensors::floats;
use crate::container::V3Layer;
use crate::kernels::activation::silu_in_place;
use crate::kernels::dense::{self, Strided};
use crate::kernels::{axpy, dot, softmax};
use crate::Result;

/// One Kronecker stage: `out = Aᵀ Z B` for `Z` the input viewed as `a x b` (row-major).
pub(crate) struct Stage {
    /// `(a, a)` row-major.
    pub(crate) fa: Vec<f32>,
    /// `(b, b)` row-major.
    pub(crate) fb: Vec<f32>,
}

impl Stage {
    /// `tmp` and `out` hold at least `a * b` floats (`out` is zero past them).
    fn apply(&self, a: usize, b: usize, z: &[f32], tmp: &mut [f32], out: &mut [f32]) {
        let n = a * b;
        // tmp[i, :] = Σ_j z[i, j] B[j, :]
        dense::matmul(
            Strided { data: z, row_stride: b, col_stride: 1 },
            &self.fb,
            b,
            &mut tmp[..n],
        );
        // out[k, :] = Σ_i A[i, k] tmp[i, :]
        dense::matmul(
            Strided { data: &self.fa, row_stride: 1, col_stride: a },
            &tmp[..n],
            b,
            &mut out[..n],
        );
        out[n..].fill(0.0);
    }
}

/// One layer's MLP weights, FP16 widened to f32 once at load.
pub struct HadamardMlp {
    pub(crate) d1: Vec<f32>,
    pub(crate) d2: Vec<f32>,
    pub(crate) b2: Vec<f32>,
    pub(crate) d3: Vec<f32>,
    pub(crate) d4: Vec<f32>,
    pub(crate) stages: [Stage; 3],
    /// `cond_v` transposed to `(rank, d_model)` so each logit is one dot product.
    pub(crate) cond_vt: Vec<f32>,
    /// `(rank, n)`.
    pub(crate) cond_u: Vec<f32>,
    /// Conditioning rank (upstream's `HADA_COND_RANK`), read from the shapes.
    pub(crate) rank: usize,
    /// Kronecker factor sizes, `a * b = n`.
    pub(crate) a: usize,
    pub(crate) b: usize,
}

/// The two fixed permutations every layer's MLP applies (`hada_p1`, `hada_p2`), validated.
pub struct Permutations {
    pub(crate) p1: Vec<u32>,
    pub(crate) p2: Vec<u32>,
}

/// Per-call buffers of the MLP (part of the session state).
pub struct MlpScratch {
    z: Vec<f32>,
    t: Vec<f32>,
    u: Vec<f32>,
    cond: Vec<f32>,
    logits: Vec<f32>,
}

impl HadamardMlp {
    pub(crate) fn new(l: &V3Layer<'_>, d_model: usize, n: usize) -> Result<Self> {
        let a = 1usize << ((usize::BITS - (n - 1).leading_zeros()) / 2);
        let b = n / a;
        let stage = |fa, fb| -> Result<Stage> {
            Ok(Stage { fa: floats(fa, a * a)?, fb: floats(fb, b * b)? })
        };
        let rank = l.cond_v.dims().get(1).copied().unwrap_or(0) as usize;
        let cond_v = floats(&l.cond_v, d_model * rank)?;
        let mut cond_vt = vec![0.0; d_model * rank];
        for c in 0..d_model {
            for r in 0..rank {
                cond_vt[r * d_model + c] = cond_v[c * rank + r];
            }
        }
        Ok(Self {
            d1: floats(&l.d1, n)?,
            d2: floats(&l.d2, n)?,
            b2: floats(&l.b2, n)?,
            d3: floats(&l.d3, n)?,
            d4: floats(&l.d4, n)?,
            stages: [stage(&l.w1a, &l.w1b)?, stage(&l.w2a, &l.w2b)?, stage(&l.w3a, &l.w3b)?],
            cond_vt,
            cond_u: floats(&l.cond_u, rank * n)?,
            rank,
            a,
            b,
        })
    }
}

impl Mlp for HadamardMlp {
    type Shared = Permutations;
    type Scratch = MlpScratch;

    fn scratch<'m>(mlps: impl Iterator<Item = &'m Self>) -> MlpScratch {
        let (mut n, mut rank) = (0, 0);
        for m in mlps {
            n = n.max(m.d1.len());
            rank = rank.max(m.rank);
        }
        MlpScratch {
            z: vec![0.0; n],
            t: vec![0.0; n],
            u: vec![0.0; n],
            cond: vec![0.0; n],
            logits: vec![0.0; rank],
        }
    }

    fn forward(&self, perm: &Permutations, x: &[f32], s: &mut MlpScratch, out: &mut [f32]) {
        let (d, n, a, b) = (x.len(), self.d1.len(), self.a, self.b);
        // cond = 1 + softmax(x @ cond_v) @ cond_u
        let logits = &mut s.logits[..self.rank];
        for (r, logit) in logits.iter_mut().enumerate() {
            *logit = dot(x, &self.cond_vt[r * d..(r + 1) * d]);
        }
        softmax(logits);
        s.cond.fill(0.0);
        for (r, &w) in logits.iter().enumerate() {
            axpy(w, &self.cond_u[r * n..(r + 1) * n], &mut s.cond);
        }
        for c in s.cond.iter_mut() {
            *c += 1.0;
        }

        for (i, z) in s.z.iter_mut().enumerate() {
            *z = if i < d { self.d1[i] * x[i] } else { 0.0 };
        }
        self.stages[0].apply(a, b, &s.z, &mut s.t, &mut s.u);
        for (i, (z, &p)) in s.z.iter_mut().zip(&perm.p1).enumerate() {
            *z = self.d2[i] * s.cond[i] * s.u[p as usize] + self.b2[i];
        }
        silu_in_place(&mut s.z);
        self.stages[1].apply(a, b, &s.z, &mut s.t, &mut s.u);
        for ((z, &p), &d3) in s.z.iter_mut().zip(&perm.p2).zip(&self.d3) {
            *z = d3 * s.u[p as usize];
        }
        self.stages[2].apply(a, b, &s.z, &mut s.t, &mut s.u);
        for ((o, &d4), &u) in out[..d].iter_mut().zip(&self.d4).zip(&s.u) {
            *o = d4 * u;
        }
    }

    fn work(&self) -> usize {
        // Three stages of two small products (n * (a + b)), the conditioning (rank * (d + n)) and
        // the diagonals.
        let (n, d) = (self.d1.len(), self.cond_vt.len() / self.rank.max(1));
        3 * n * (self.a + self.b) + self.rank * (d + n) + 8 * n
    }
}
