//! Logistic activations: `sigmoid(x) = 1 / (1 + e^-x)` and `silu(x) = x · sigmoid(x)`, on the
//! softmax's polynomial exponential (within 2 ulp of `expf`; libm's is a long branchy routine
//! the compiler cannot vectorise), one element at a time or over a slice. The SIMD128 twin
//! uses the lane-wise twin of that exponential and the same division, so the bits agree.

// With simd128 the dispatchers call the twins; the scalar versions stay as the reference the
// twin tests compare against.
#![cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

use super::softmax::exp;

/// `1 / (1 + e^-x)`.
#[inline]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// `x · sigmoid(x)`.
#[inline]
pub fn silu(x: f32) -> f32 {
    x * sigmoid(x)
}

/// `x[i] = silu(x[i])`.
pub fn silu_in_place(x: &mut [f32]) {
    dispatch!(simd128::silu_in_place, silu_in_place_scalar, x)
}

/// `y[i] *= sigmoid(gate[i])`.
pub fn mul_sigmoid(y: &mut [f32], gate: &[f32]) {
    assert_eq!(y.len(), gate.len(), "mul_sigmoid: lengths differ");
    dispatch!(simd128::mul_sigmoid, mul_sigmoid_scalar, y, gate)
}

pub(crate) fn silu_in_place_scalar(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = silu(*v);
    }
}

pub(crate) fn mul_sigmoid_scalar(y: &mut [f32], gate: &[f32]) {
    for (v, &g) in y.iter_mut().zip(gate) {
        *v *= sigmoid(g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::pseudo_random;

    #[test]
    fn sigmoid_is_within_a_few_ulp_of_the_double_precision_logistic() {
        for &x in &pseudo_random(4000, 21).iter().map(|v| v * 20.0).collect::<Vec<_>>() {
            let want = 1.0 / (1.0 + (-f64::from(x)).exp());
            assert!(
                (f64::from(sigmoid(x)) - want).abs() <= 4.0 * f64::from(f32::EPSILON) * want,
                "{x}"
            );
        }
        assert_eq!(sigmoid(0.0), 0.5);
        // Past the exponential's clamp: e^EXP_MAX, not infinity, so a subnormal instead of 0.
        assert!((0.0..1e-38).contains(&sigmoid(-200.0)));
        assert_eq!(sigmoid(200.0), 1.0);
    }

    #[test]
    fn slice_forms_apply_the_element_functions() {
        let x = pseudo_random(37, 22).iter().map(|v| v * 8.0).collect::<Vec<_>>();
        let mut s = x.clone();
        silu_in_place(&mut s);
        assert!(s.iter().zip(&x).all(|(a, &b)| a.to_bits() == silu(b).to_bits()));
        let mut y = vec![1.5f32; 37];
        mul_sigmoid(&mut y, &x);
        assert!(y.iter().zip(&x).all(|(a, &b)| a.to_bits() == (1.5 * sigmoid(b)).to_bits()));
    }
}
