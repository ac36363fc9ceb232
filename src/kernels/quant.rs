//! Symmetric per-vector int8 quantisation, bit-exact with upstream's
//! `fake_quant(x, group=len(x), bits=8)` as XLA evaluates it in f32.
//!
//! Upstream writes `scale = absmax / 127` (1 when absmax is 0) and `q = clip(round(x / scale),
//! -128, 127)` with round-half-to-even; XLA rewrites both divisions into multiplies: `scale =
//! absmax * fl(1/127)` and `x * fl(1 / scale)`. On exact .5 ties the two forms round to different
//! codes, and upstream's reference outputs follow XLA's, so this module does too.
//!
//! Upstream then returns `x + stop_gradient(q*scale - x)`, which in the forward pass equals
//! `q*scale` exactly (`q*scale` lies within a factor of two of `x`, or is 0, so the subtraction
//! and the re-addition are exact).

const QMAX: f32 = 127.0;

/// `(scale, 1/scale)` for `x`: `scale = absmax * fl(1/127)`, or 1 when `absmax` is 0.
fn scale_of(x: &[f32]) -> (f32, f32) {
    let absmax = x.iter().fold(0.0f32, |m, &v| {
        let a = libm::fabsf(v);
        if m < a {
            a
        } else {
            m
        }
    });
    let scale = if absmax > 0.0 { absmax * (1.0 / QMAX) } else { 1.0 };
    (scale, 1.0 / scale)
}

#[inline]
fn code(v: f32, inv_scale: f32) -> f32 {
    // rintf rounds half to even, like jnp.round.
    libm::rintf(v * inv_scale).clamp(-QMAX - 1.0, QMAX)
}

/// Quantise `x` into `q` (same length; int8 codes, stored as `i8` or widened); returns the
/// scale. Dequantised value: `q[k] as f32 * scale`.
pub fn quantize_i8<T: From<i8>>(x: &[f32], q: &mut [T]) -> f32 {
    assert_eq!(x.len(), q.len(), "quantize_i8: lengths differ");
    let (scale, inv) = scale_of(x);
    for (o, &v) in q.iter_mut().zip(x) {
        *o = T::from(code(v, inv) as i8);
    }
    scale
}

/// Replace `x` by its int8 round trip, `q * scale`, in place.
pub fn fake_quant_i8(x: &mut [f32]) {
    let (scale, inv) = scale_of(x);
    for v in x.iter_mut() {
        *v = code(*v, inv) * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::pseudo_random;

    #[test]
    fn the_largest_magnitude_maps_to_plus_or_minus_127() {
        let mut q = [0i8; 3];
        let s = quantize_i8(&[-2.54, 1.0, 0.5], &mut q);
        assert_eq!(s, 2.54f32 * (1.0 / 127.0));
        assert_eq!(q, [-127, 50, 25]);
    }

    #[test]
    fn exact_half_steps_round_to_even() {
        // scale = 127/127 = 1, so x / scale is x itself.
        let x = [127.0f32, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5];
        let mut q = [0i8; 8];
        assert_eq!(quantize_i8(&x, &mut q), 1.0);
        assert_eq!(q, [127, 0, 2, 2, 0, -2, -2, 4]);
    }

    #[test]
    fn an_all_zero_vector_uses_scale_one() {
        let mut q = [5i8; 4];
        assert_eq!(quantize_i8(&[0.0; 4], &mut q), 1.0);
        assert_eq!(q, [0; 4]);
        let mut x = [0.0f32, -0.0];
        fake_quant_i8(&mut x);
        assert_eq!(x, [0.0, 0.0]);
    }

    #[test]
    fn fake_quant_equals_dequantised_codes() {
        let x0: Vec<f32> = pseudo_random(300, 9);
        let mut q = vec![0i8; x0.len()];
        let scale = quantize_i8(&x0, &mut q);
        let mut x = x0.clone();
        fake_quant_i8(&mut x);
        for ((v, c), orig) in x.iter().zip(&q).zip(&x0) {
            assert_eq!(*v, f32::from(*c) * scale);
            assert!((v - orig).abs() <= scale / 2.0 * (1.0 + 1e-6));
        }
    }

    #[test]
    fn ties_follow_the_reciprocal_multiply_that_xla_evaluates() {
        // Hand-checked against jax (`fake_quant(x[None], 2, 8)`): absmax 3.896071 gives
        // scale 0.030677725; 3.2058222 / scale is exactly 104.5 in f32 (-> 104), but
        // 3.2058222 * (1 / scale) is 104.50001 (-> 105), and upstream's output is 105 * scale.
        let x = [3.896_071f32, 3.205_822_2];
        let mut q = [0i8; 2];
        let s = quantize_i8(&x, &mut q);
        assert_eq!(q, [127, 105]);
        let mut y = x;
        fake_quant_i8(&mut y);
        assert_eq!(y, [3.896_071, 105.0 * s]);
        assert_eq!(y[1], 3.221_161_1);
    }
}
