//! Softmax over a vector, numerically like `jax.nn.softmax` as XLA runs it: subtract the maximum,
//! exponentiate, sum, multiply each term by `1 / sum` (XLA's rewrite of the division).
//!
//! The exponential is a Cephes-style polynomial (range reduction by ln 2 split in two parts,
//! degree-6 polynomial, exponent insertion), within 2 ulp of `expf` over the softmax range. It is
//! written once as scalar f32 arithmetic and mirrored operation for operation by the SIMD128 twin,
//! so both produce identical bits. Results below `e^-87.34` (the f32 normal range) flush to 0: a
//! term that small never changes a sum whose largest term is 1.

// With simd128 the dispatchers call the twins; the scalar versions stay as the reference the
// twin tests compare against.
#![cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) mod simd128;

pub(crate) const EXP_MIN: f32 = -87.336_54;
pub(crate) const EXP_MAX: f32 = 88.376_26;
pub(crate) const LOG2E: f32 = core::f32::consts::LOG2_E;
pub(crate) const LN2_HI: f32 = 0.693_359_4;
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
pub(crate) const P: [f32; 6] =
    [1.987_569_1e-4, 1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1, 0.5];

/// `e^x` for the softmax and the logistic activations (accurate to 2 ulp for
/// `EXP_MIN <= x <= EXP_MAX`, 0 below, `e^EXP_MAX` above).
pub(crate) fn exp(x: f32) -> f32 {
    let c = if x < EXP_MIN { EXP_MIN } else { x };
    let c = if c > EXP_MAX { EXP_MAX } else { c };
    let n = floor(c * LOG2E + 0.5);
    let r = (c - n * LN2_HI) - n * LN2_LO;
    let mut p = P[0];
    for &k in &P[1..] {
        p = p * r + k;
    }
    let y = (p * (r * r) + r) + 1.0;
    let two_n = f32::from_bits(((exponent(n) + 127) as u32) << 23);
    if x < EXP_MIN {
        0.0
    } else {
        y * two_n
    }
}

/// Adding and subtracting 1.5 * 2^23 rounds an f32 below 2^22 in magnitude to an integer (the
/// spacing of f32 there is 1). Plain float arithmetic where `as i32` would saturate, which the
/// compiler does lane by lane on x86-64 (a fifth of long-context attention's time went there).
const ROUND: f32 = 12_582_912.0;

/// `floorf` for the exponent's range (|t| < 2^22), NaN passed through.
#[inline(always)]
fn floor(t: f32) -> f32 {
    let r = (t + ROUND) - ROUND;
    if r > t {
        r - 1.0
    } else {
        r
    }
}

/// `n as i32` for an integral `n` of the exponent's range (the low bits of `n + ROUND`); a NaN
/// `n` gives an exponent whose power of two has a zero mantissa, never a NaN, so the NaN in
/// `y` still decides the product, as with `as i32`'s 0.
#[inline(always)]
fn exponent(n: f32) -> i32 {
    (n + ROUND).to_bits() as i32 - ROUND.to_bits() as i32
}

/// In-place softmax of `x` (no-op on an empty slice).
pub fn softmax(x: &mut [f32]) {
    dispatch!(simd128::softmax, softmax_scalar, x)
}

pub(crate) fn max_scalar(x: &[f32]) -> f32 {
    x.iter().fold(f32::NEG_INFINITY, |m, &v| if m < v { v } else { m })
}

pub(crate) fn softmax_scalar(x: &mut [f32]) {
    let max = max_scalar(x);
    let mut lanes = [0.0f32; 16];
    // Chunks of 16 (lane k % 16 takes term k, in order), which the compiler vectorises.
    for chunk in x.chunks_mut(16) {
        for (v, l) in chunk.iter_mut().zip(&mut lanes) {
            *v = exp(*v - max);
            *l += *v;
        }
    }
    let inv = 1.0 / super::vector::finish4(super::vector::lanes16_to_4(&lanes));
    for v in x.iter_mut() {
        *v *= inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::pseudo_random;

    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_two_ulp_of_libm_over_the_normal_range() {
        let mut worst = 0;
        let mut x = EXP_MIN;
        while x <= EXP_MAX {
            worst = worst.max(ulps(exp(x), libm::expf(x)));
            x += 0.000_73;
        }
        assert!(worst <= 2, "worst error {worst} ulp");
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn floor_and_exponent_are_exact_over_the_exponent_range() {
        let mut t = -130.0f32;
        while t <= 130.0 {
            let want = libm::floorf(t);
            // Zero comes out +0 where floorf keeps -0 (exp never forms -0: t = c * LOG2E + 0.5).
            assert_eq!(
                floor(t).to_bits(),
                if want == 0.0 { 0 } else { want.to_bits() },
                "floor({t})"
            );
            assert_eq!(exponent(want), want as i32, "exponent({want})");
            t += 0.001_7;
        }
        assert!(floor(f32::NAN).is_nan());
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn exp_flushes_below_the_normal_range_and_of_minus_infinity_to_zero() {
        assert_eq!(exp(-88.0), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(f32::MIN), 0.0);
    }

    #[test]
    fn softmax_sums_to_one_and_matches_a_double_precision_reference() {
        for n in [1usize, 3, 16, 37, 300] {
            let mut x: Vec<f32> = pseudo_random(n, n as u32).iter().map(|v| v * 8.0).collect();
            let max = x.iter().cloned().fold(f64::NEG_INFINITY, |m, v| m.max(f64::from(v)));
            let e: Vec<f64> = x.iter().map(|&v| (f64::from(v) - max).exp()).collect();
            let total: f64 = e.iter().sum();
            softmax(&mut x);
            for (got, want) in x.iter().zip(&e) {
                assert!((f64::from(*got) - want / total).abs() <= 1e-6 * (want / total) + 1e-12);
            }
            let s: f32 = x.iter().sum();
            assert!((s - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn softmax_gives_masked_entries_zero_weight() {
        let mut x = [1.0f32, f32::MIN, 1.0, f32::NEG_INFINITY];
        softmax(&mut x);
        assert_eq!(x, [0.5, 0.0, 0.5, 0.0]);
    }

    #[test]
    fn softmax_is_shift_invariant_for_large_inputs() {
        let mut a = [1000.0f32, 1001.0, 999.0];
        let mut b = [0.0f32, 1.0, -1.0];
        softmax(&mut a);
        softmax(&mut b);
        assert_eq!(a, b);
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn simd_twin_is_bit_identical_to_scalar_softmax() {
        for n in [1usize, 3, 4, 15, 16, 17, 100, 1024, 1031] {
            let x: Vec<f32> = pseudo_random(n, 11 + n as u32).iter().map(|v| v * 30.0).collect();
            let (mut a, mut b) = (x.clone(), x);
            softmax_scalar(&mut a);
            crate::kernels::softmax::simd128::softmax(&mut b);
            assert_eq!(a, b, "n={n}");
        }
        let x: Vec<f32> = pseudo_random(4096, 5).iter().map(|v| v * 60.0).collect();
        for c in x.chunks_exact(4) {
            let v = [c[0], c[1], c[2], c[3]];
            let got = crate::kernels::softmax::simd128::exp4_array(v);
            assert_eq!(got.map(f32::to_bits), v.map(|u| exp(u).to_bits()), "exp twin at {v:?}");
        }
    }
}
