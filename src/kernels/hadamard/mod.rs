//! In-place orthonormal fast Walsh-Hadamard transform in natural (Sylvester) order.
//!
//! Ports the effect of multiplying by upstream's `_cq_hadamard_np(n)`: the Sylvester matrix
//! `H[i][j] = (-1)^popcount(i & j)` scaled by `1/sqrt(n)`. The butterflies below apply exactly that
//! matrix in `n log n` additions, then one scaling pass. H is symmetric, so `x·H == H·x`.
//!
//! Stages run from stride 1 upwards; every butterfly is a single `u + v`, `u - v`, so the SIMD twin
//! (which fuses strides 1 and 2 inside a vector with sign flips, `u + (-v) == u - v` exactly)
//! produces bit-identical results.

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

/// `1/sqrt(n)` as upstream builds it: in double precision, then rounded to f32.
pub(crate) fn orthonormal_scale(n: usize) -> f32 {
    (1.0 / libm::sqrt(n as f64)) as f32
}

/// Orthonormal FWHT of `x` in place. `x.len()` must be a power of two (1 is the identity).
pub fn fwht(x: &mut [f32]) {
    assert!(x.len().is_power_of_two(), "fwht: length {} is not a power of two", x.len());
    dispatch!(simd128::fwht, fwht_scalar, x)
}

/// Scalar twin of [`fwht`]; `x.len()` is a power of two.
pub(crate) fn fwht_scalar(x: &mut [f32]) {
    butterflies(x);
    scale(x, orthonormal_scale(x.len()));
}

/// The unnormalised transform: `log2(n)` stages of `u + v`, `u - v` from stride 1 upwards (exact
/// in integers, as the A8 kernels use it).
pub(crate) fn butterflies<T: Copy + core::ops::Add<Output = T> + core::ops::Sub<Output = T>>(
    x: &mut [T],
) {
    let n = x.len();
    let mut h = 1;
    while h < n {
        for block in x.chunks_exact_mut(2 * h) {
            let (a, b) = block.split_at_mut(h);
            for (u, v) in a.iter_mut().zip(b.iter_mut()) {
                let (p, q) = (*u, *v);
                *u = p + q;
                *v = p - q;
            }
        }
        h *= 2;
    }
}

fn scale(x: &mut [f32], s: f32) {
    for v in x {
        *v *= s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::{explicit_hadamard, pseudo_random};

    #[test]
    fn fwht_equals_multiplying_by_the_explicit_normalised_sylvester_matrix() {
        for n in [1usize, 2, 4, 8, 16, 32, 64, 128, 256] {
            let x = pseudo_random(n, n as u32);
            let h = explicit_hadamard(n);
            let want: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| f64::from(h[i * n + j]) * f64::from(x[j])).sum())
                .collect();
            let mut got = x.clone();
            fwht(&mut got);
            for i in 0..n {
                assert!(
                    (f64::from(got[i]) - want[i]).abs() <= 1e-5,
                    "n={n} i={i}: {} vs {}",
                    got[i],
                    want[i]
                );
            }
        }
    }

    #[test]
    fn fwht_twice_returns_the_input() {
        let x = pseudo_random(1024, 7);
        let mut y = x.clone();
        fwht(&mut y);
        fwht(&mut y);
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b).abs() <= 1e-5);
        }
    }

    #[test]
    fn fwht_maps_a_unit_impulse_to_a_constant_row() {
        let mut x = vec![0.0f32; 64];
        x[0] = 1.0;
        fwht(&mut x);
        assert!(x.iter().all(|&v| v == 0.125));
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn simd_twin_is_bit_identical_to_scalar_fwht() {
        for n in [1usize, 2, 4, 8, 16, 32, 128, 1024] {
            let x = pseudo_random(n, 3 + n as u32);
            let (mut a, mut b) = (x.clone(), x);
            fwht_scalar(&mut a);
            crate::kernels::hadamard::simd128::fwht(&mut b);
            assert_eq!(a, b, "n={n}");
        }
    }
}
