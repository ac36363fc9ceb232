//! Shared helpers for the kernel tests: deterministic inputs and naive references.
use super::hadamard::orthonormal_scale;

/// Deterministic values in [-2, 2) (xorshift32).
pub(crate) fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32) * 4.0 - 2.0
        })
        .collect()
}

/// Deterministic bytes (xorshift32).
pub(crate) fn pseudo_random_bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2_246_822_519).wrapping_add(3);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 24) as u8
        })
        .collect()
}

/// Upstream's `_cq_hadamard_np(n)` as a dense row-major matrix: Sylvester blocks
/// `[[H, H], [H, -H]]` divided by sqrt(n), in f32.
pub(crate) fn explicit_hadamard(n: usize) -> Vec<f32> {
    let s = orthonormal_scale(n);
    let mut h = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            let sign = if (i & j).count_ones() % 2 == 0 { 1.0 } else { -1.0 };
            h[i * n + j] = sign * s;
        }
    }
    h
}

/// Equal as floats, or both NaN.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) fn same(a: f32, b: f32) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}
