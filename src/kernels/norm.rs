//! RMS normalisation helpers, computed the way XLA evaluates upstream's norms in f32: the mean
//! is `sum * (1/n)` (XLA turns division by a constant into a multiply), and the division by
//! `sqrt(mean + eps)` becomes a multiply by its reciprocal square root.
use super::vector::dot;

/// `1 / sqrt(sum(x²) * (1/n) + eps)`.
pub fn inv_rms(x: &[f32], eps: f32) -> f32 {
    let mean = dot(x, x) * (1.0 / x.len() as f32);
    1.0 / libm::sqrtf(mean + eps)
}

/// `out[k] = (gain[k] * x[k]) * inv_rms(x)`: upstream's `ZCRMSNorm` with `gain = 1 + scale`
/// (the caller forms `gain` once; `1 + scale` in f32 is exactly the factor upstream uses).
pub fn rms_norm(x: &[f32], gain: &[f32], eps: f32, out: &mut [f32]) {
    assert!(x.len() == gain.len() && x.len() == out.len(), "rms_norm: lengths differ");
    let inv = inv_rms(x, eps);
    for ((o, &v), &g) in out.iter_mut().zip(x).zip(gain) {
        *o = (g * v) * inv;
    }
}

/// `out[k] = x[k] * inv_rms(x)`: upstream's gain-free `_rms_unit`.
pub fn rms_unit(x: &[f32], eps: f32, out: &mut [f32]) {
    assert_eq!(x.len(), out.len(), "rms_unit: lengths differ");
    let inv = inv_rms(x, eps);
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v * inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_rms_of_a_constant_vector_is_one_over_its_magnitude() {
        assert_eq!(inv_rms(&[4.0; 8], 0.0), 0.25);
        assert_eq!(inv_rms(&[-2.0; 4], 0.0), 0.5);
    }

    #[test]
    fn rms_norm_scales_by_gain_over_rms() {
        let x = [3.0f32, -4.0];
        let mut out = [0.0f32; 2];
        // mean square 12.5, eps 3.5 -> rms 4
        rms_norm(&x, &[1.0, 2.0], 3.5, &mut out);
        assert_eq!(out, [0.75, -2.0]);
    }

    #[test]
    fn rms_unit_output_has_unit_rms_when_eps_is_tiny() {
        let x = [1.0f32, 2.0, 3.0, 4.0, -5.0];
        let mut out = [0.0f32; 5];
        rms_unit(&x, 1e-12, &mut out);
        assert!((inv_rms(&out, 0.0) - 1.0).abs() < 1e-6);
    }
}
