//! Needle 2's Hadamard MLP (upstream 2.0.15 `HadamardMLP`): two orthonormal Walsh-Hadamard
//! transforms around learned diagonals, no weight matrices at all.
//!
//! ```text
//! z   = H (d1 ⊙ pad(x))          pad to n = hada_n with zeros
//! z   = H silu(d2 ⊙ z)
//! out = (d3 ⊙ z)[..d_model]
//! ```
//!
//! `H` is the Sylvester matrix scaled by `1/sqrt(n)`; it is symmetric, so upstream's `z @ H`
//! is the in-place transform [`fwht`].
use alloc::vec;
use alloc::vec::Vec;

use crate::blocks::silu;
use crate::blocks::stack::Mlp;
use crate::blocks::tensors::floats;
use crate::container::V2Layer;
use crate::kernels::fwht;
use crate::Result;

/// One layer's diagonals, FP16 widened to f32 once at load (`n` each).
pub struct WalshMlp {
    d1: Vec<f32>,
    d2: Vec<f32>,
    d3: Vec<f32>,
}

impl WalshMlp {
    pub(crate) fn new(l: &V2Layer<'_>, n: usize) -> Result<Self> {
        Ok(Self { d1: floats(&l.d1, n)?, d2: floats(&l.d2, n)?, d3: floats(&l.d3, n)? })
    }
}

impl Mlp for WalshMlp {
    type Shared = ();
    /// One `hada_n`-wide buffer.
    type Scratch = Vec<f32>;

    fn scratch<'m>(mlps: impl Iterator<Item = &'m Self>) -> Vec<f32> {
        vec![0.0; mlps.map(|m| m.d1.len()).max().unwrap_or(0)]
    }

    fn forward(&self, _: &(), x: &[f32], z: &mut Vec<f32>, out: &mut [f32]) {
        let d = x.len();
        for (i, v) in z.iter_mut().enumerate() {
            *v = if i < d { self.d1[i] * x[i] } else { 0.0 };
        }
        fwht(z);
        for (v, &d2) in z.iter_mut().zip(&self.d2) {
            *v = silu(d2 * *v);
        }
        fwht(z);
        for ((o, &d3), &v) in out[..d].iter_mut().zip(&self.d3).zip(z.iter()) {
            *o = d3 * v;
        }
    }

    fn work(&self) -> usize {
        // Two transforms (n log2 n each), the diagonals and the activation.
        let n = self.d1.len();
        2 * n * n.max(2).ilog2() as usize + 8 * n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explicit_walsh(n: usize) -> Vec<f64> {
        let s = 1.0 / (n as f64).sqrt();
        (0..n * n)
            .map(|k| if ((k / n) & (k % n)).count_ones().is_multiple_of(2) { s } else { -s })
            .collect()
    }

    #[test]
    fn the_mlp_equals_the_dense_walsh_formula() {
        let (d, n) = (6, 8);
        let m = WalshMlp {
            d1: (0..n).map(|i| 0.5 + i as f32 * 0.1).collect(),
            d2: (0..n).map(|i| 1.5 - i as f32 * 0.2).collect(),
            d3: (0..n).map(|i| (i as f32 - 3.0) * 0.3).collect(),
        };
        let x: Vec<f32> = (0..d).map(|i| (i as f32 * 0.7).sin()).collect();
        let h = explicit_walsh(n);
        let mul = |v: &[f64]| -> Vec<f64> {
            (0..n).map(|c| (0..n).map(|r| v[r] * h[r * n + c]).sum()).collect()
        };
        let z: Vec<f64> =
            (0..n).map(|i| if i < d { f64::from(m.d1[i] * x[i]) } else { 0.0 }).collect();
        let z = mul(&z);
        let z: Vec<f64> = z
            .iter()
            .zip(&m.d2)
            .map(|(&v, &g)| (f64::from(g) * v) / (1.0 + (-(f64::from(g) * v)).exp()))
            .collect();
        let z = mul(&z);
        let want: Vec<f64> = (0..d).map(|i| f64::from(m.d3[i]) * z[i]).collect();
        let mut scratch = WalshMlp::scratch([&m].into_iter());
        let mut out = vec![0.0f32; d];
        m.forward(&(), &x, &mut scratch, &mut out);
        for (g, w) in out.iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() < 1e-6, "{g} vs {w}");
        }
    }
}
