//! Vector helpers for the forward passes: f32 dot and axpy, and the int8-KV-cache forms.
//!
//! Reductions use one fixed order, shared with the SIMD128 twins (which are bit-identical):
//! lane `i` of 16 accumulates the terms `k ≡ i (mod 16)` (tail included), lanes combine to 4 as
//! `(l[i] + l[4+i]) + (l[8+i] + l[12+i])`, and those finish as `(r0 + r2) + (r1 + r3)`.
//! Written as explicit lanes, the scalar code also vectorises on native targets.

// With simd128 the dispatchers call the twins; the scalar versions stay as the reference the
// twin tests compare against.
#![cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;
#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod sse2;

/// `Σ a[k] * b[k]` in the crate's fixed summation order.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "dot: lengths differ");
    dispatch!(simd128::dot, dot_scalar, a, b)
}

/// `y[k] += alpha * x[k]`.
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    assert_eq!(x.len(), y.len(), "axpy: lengths differ");
    dispatch!(simd128::axpy, axpy_scalar, alpha, x, y)
}

/// `scale * Σ x[k] * q[k]`: a query against one int8 key row whose dequantised values are
/// `q * scale` (the scale is factored out of the sum).
pub fn dot_i8(x: &[f32], q: &[i8], scale: f32) -> f32 {
    assert_eq!(x.len(), q.len(), "dot_i8: lengths differ");
    dispatch!(simd128::dot_i8, dot_i8_scalar, x, q, scale)
}

/// `y[k] += alpha * (q[k] * scale)`: accumulate one int8 value row, dequantised exactly as
/// `fake_quant` forms it, with weight `alpha`.
pub fn axpy_i8(alpha: f32, q: &[i8], scale: f32, y: &mut [f32]) {
    assert_eq!(q.len(), y.len(), "axpy_i8: lengths differ");
    dispatch!(simd128::axpy_i8, axpy_i8_scalar, alpha, q, scale, y)
}

/// Exact integer `Σ a[k] * b[k]` (wrapping; cannot overflow below 131072 terms).
pub fn dot_i8_i8(a: &[i8], b: &[i8]) -> i32 {
    assert_eq!(a.len(), b.len(), "dot_i8_i8: lengths differ");
    dispatch!(simd128::dot_i8_i8, dot_i8_i8_scalar, a, b)
}

/// `out[g] = dot_i8_i8(row g of a, b)` for `a` holding `out.len()` rows of `b.len()`: several
/// queries against one key row, which is loaded and widened once for all of them.
pub fn dot_i8_i8_rows(a: &[i8], b: &[i8], out: &mut [i32]) {
    assert_eq!(
        a.len(),
        out.len() * b.len(),
        "dot_i8_i8_rows: a must hold out.len() rows of b.len()"
    );
    // SSE2 is on every x86-64 CPU; the compiler's own vectorisation of the scalar loop is poor.
    dispatch!(x86: { sse2::dot_i8_i8_rows(a, b, out); true }; simd128::dot_i8_i8_rows, dot_i8_i8_rows_scalar, a, b, out)
}

/// `axpy_i8(alpha[g], q, scale, row g of y)` for `y` holding `alpha.len()` rows of `q.len()`:
/// one int8 value row into several outputs, dequantised once for all of them (the same
/// per-element arithmetic as `axpy_i8`, so the same bits).
pub fn axpy_i8_rows(alpha: &[f32], q: &[i8], scale: f32, y: &mut [f32]) {
    assert_eq!(
        y.len(),
        alpha.len() * q.len(),
        "axpy_i8_rows: y must hold alpha.len() rows of q.len()"
    );
    dispatch!(simd128::axpy_i8_rows, axpy_i8_rows_scalar, alpha, q, scale, y)
}

/// Most rows [`axpy_i8_keys`] serves.
pub const KEYS_ROWS: usize = 16;

/// `axpy_i8_rows` for every int8 row `keys` yields (`(q_i, scale_i)`, `i` in order), with the
/// weights `w[g * n + i]` for row g of `y` (`n` keys; `w` holds one row of `n` weights per row of
/// `y`, `KEYS_ROWS` rows at most): attention's weighted sum of the cached values of its keys.
/// Every element sees the same operations in the same key order as key-by-key calls, so the
/// same bits, whichever variant runs.
pub fn axpy_i8_keys<'a>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)> + Clone,
    y: &mut [f32],
) {
    let rows = w.len().checked_div(n).unwrap_or(0);
    assert!(
        rows <= KEYS_ROWS && rows * n == w.len(),
        "axpy_i8_keys: w must hold at most KEYS_ROWS rows of n weights"
    );
    assert!(
        rows == 0 || y.len().is_multiple_of(rows),
        "axpy_i8_keys: y must hold one row per row of w"
    );
    dispatch!(x86: avx::axpy_i8_keys(w, n, keys.clone(), y); axpy_i8_keys_rowwise; w, n, keys, y)
}

/// `axpy_i8_keys` one key at a time (the portable form, and the x86 variants' reference).
pub(crate) fn axpy_i8_keys_rowwise<'a>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)>,
    y: &mut [f32],
) {
    let rows = w.len().checked_div(n).unwrap_or(0);
    let mut alpha = [0.0f32; KEYS_ROWS];
    for (i, (q, scale)) in keys.take(n).enumerate() {
        for (g, a) in alpha[..rows].iter_mut().enumerate() {
            *a = w[g * n + i];
        }
        axpy_i8_rows(&alpha[..rows], q, scale, y);
    }
}

/// The 16 lane sums of `a[k] * b[k]` (lane `k % 16`).
#[inline(always)]
pub(crate) fn dot_lanes16(a: &[f32], b: &[f32]) -> [f32; 16] {
    let mut acc = [0.0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += x[i] * y[i];
        }
    }
    for (i, (x, y)) in ta.iter().zip(tb).enumerate() {
        acc[i] += x * y;
    }
    acc
}

/// `(l[i] + l[4+i]) + (l[8+i] + l[12+i])` for i in 0..4.
#[inline(always)]
pub(crate) fn lanes16_to_4(l: &[f32; 16]) -> [f32; 4] {
    core::array::from_fn(|i| (l[i] + l[4 + i]) + (l[8 + i] + l[12 + i]))
}

/// `(r0 + r2) + (r1 + r3)`.
#[inline(always)]
pub(crate) fn finish4(r: [f32; 4]) -> f32 {
    (r[0] + r[2]) + (r[1] + r[3])
}

pub(crate) fn dot_scalar(a: &[f32], b: &[f32]) -> f32 {
    finish4(lanes16_to_4(&dot_lanes16(a, b)))
}

pub(crate) fn axpy_scalar(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (v, &u) in y.iter_mut().zip(x) {
        *v += alpha * u;
    }
}

pub(crate) fn dot_i8_scalar(x: &[f32], q: &[i8], scale: f32) -> f32 {
    let mut acc = [0.0f32; 16];
    for (k, (&u, &v)) in x.iter().zip(q).enumerate() {
        acc[k % 16] += u * f32::from(v);
    }
    finish4(lanes16_to_4(&acc)) * scale
}

pub(crate) fn axpy_i8_scalar(alpha: f32, q: &[i8], scale: f32, y: &mut [f32]) {
    for (v, &u) in y.iter_mut().zip(q) {
        *v += alpha * (f32::from(u) * scale);
    }
}

pub(crate) fn dot_i8_i8_scalar(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).fold(0i32, |s, (&x, &y)| s.wrapping_add(i32::from(x) * i32::from(y)))
}

// x86-64 runs the SSE2 twin; its test compares against this.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) fn dot_i8_i8_rows_scalar(a: &[i8], b: &[i8], out: &mut [i32]) {
    if b.is_empty() {
        out.fill(0);
        return;
    }
    for (o, row) in out.iter_mut().zip(a.chunks_exact(b.len())) {
        *o = dot_i8_i8_scalar(row, b);
    }
}

pub(crate) fn axpy_i8_rows_scalar(alpha: &[f32], q: &[i8], scale: f32, y: &mut [f32]) {
    // Dequantised 64 values at a time, then one plain (vectorisable) axpy per row.
    let n = q.len();
    let mut deq = [0.0f32; 64];
    for (c, qc) in q.chunks(64).enumerate() {
        let deq = &mut deq[..qc.len()];
        for (d, &u) in deq.iter_mut().zip(qc) {
            *d = f32::from(u) * scale;
        }
        for (g, &a) in alpha.iter().enumerate() {
            for (v, &d) in y[g * n + 64 * c..][..qc.len()].iter_mut().zip(deq.iter()) {
                *v += a * d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::{pseudo_random, pseudo_random_bytes};

    fn as_i8(b: Vec<u8>) -> Vec<i8> {
        b.into_iter().map(|v| v as i8).collect()
    }

    #[test]
    fn dot_matches_a_double_precision_sum() {
        for n in [0usize, 1, 7, 16, 17, 64, 100, 768, 3001] {
            let (a, b) = (pseudo_random(n, 1), pseudo_random(n, 2));
            let want: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            let bound: f64 =
                a.iter().zip(&b).map(|(x, y)| f64::from((x * y).abs())).sum::<f64>() * 1e-6 + 1e-30;
            assert!((f64::from(dot(&a, &b)) - want).abs() <= bound, "n={n}");
        }
    }

    #[test]
    fn dot_sums_in_the_documented_lane_order() {
        // 1e8 + 1 - 1e8 is order-sensitive in f32: terms in lanes 0 and 16 % 16 == 0 meet first.
        let mut a = vec![0.0f32; 32];
        a[0] = 1e8;
        a[16] = 1.0;
        a[1] = -1e8;
        let ones = vec![1.0f32; 32];
        // lane 0 = 1e8 + 1 = 1e8 (rounded); lane 1 = -1e8; finish: (l0 + l2) + (l1 + l3) = 0.
        assert_eq!(dot(&a, &ones), 0.0);
    }

    #[test]
    fn axpy_adds_a_scaled_vector() {
        let x = [1.0f32, -2.0, 0.5];
        let mut y = [10.0f32, 10.0, 10.0];
        axpy(2.0, &x, &mut y);
        assert_eq!(y, [12.0, 6.0, 11.0]);
    }

    #[test]
    fn dot_i8_equals_dot_against_the_dequantised_row_up_to_rounding() {
        for n in [5usize, 16, 64, 129] {
            let x = pseudo_random(n, 3);
            let q = as_i8(pseudo_random_bytes(n, 4));
            let scale = 0.0123f32;
            let deq: Vec<f32> = q.iter().map(|&v| f32::from(v) * scale).collect();
            let (got, want) = (dot_i8(&x, &q, scale), dot(&x, &deq));
            assert!((got - want).abs() <= 1e-5 * (1.0 + want.abs()), "n={n}: {got} vs {want}");
        }
    }

    #[test]
    fn axpy_i8_adds_the_weighted_dequantised_row_exactly() {
        let q = [127i8, -128, 3, 0];
        let mut y = [1.0f32; 4];
        axpy_i8(0.5, &q, 0.25, &mut y);
        assert_eq!(y, [1.0 + 0.5 * 31.75, 1.0 - 16.0, 1.0 + 0.375, 1.0]);
    }

    #[test]
    fn dot_i8_i8_is_the_exact_integer_dot_product() {
        for n in [0usize, 3, 16, 33, 1000] {
            let (a, b) = (as_i8(pseudo_random_bytes(n, 5)), as_i8(pseudo_random_bytes(n, 6)));
            let want: i64 = a.iter().zip(&b).map(|(&x, &y)| i64::from(x) * i64::from(y)).sum();
            assert_eq!(i64::from(dot_i8_i8(&a, &b)), want, "n={n}");
        }
        assert_eq!(dot_i8_i8(&[-128; 40], &[-128; 40]), 40 * 16384);
    }

    #[test]
    fn row_kernels_equal_one_call_per_row() {
        for n in [0usize, 5, 16, 48, 64, 100] {
            for rows in [1usize, 6, 17] {
                let a = as_i8(pseudo_random_bytes(rows * n, 11));
                let b = as_i8(pseudo_random_bytes(n, 12));
                let mut got = vec![0i32; rows];
                dot_i8_i8_rows(&a, &b, &mut got);
                let want: Vec<i32> =
                    (0..rows).map(|g| dot_i8_i8(&a[g * n..(g + 1) * n], &b)).collect();
                assert_eq!(got, want, "dot rows n={n} rows={rows}");
                let alpha = pseudo_random(rows, 13);
                let y0 = pseudo_random(rows * n, 14);
                let mut got = y0.clone();
                axpy_i8_rows(&alpha, &b, 0.017, &mut got);
                let mut want = y0;
                for g in 0..rows {
                    axpy_i8(alpha[g], &b, 0.017, &mut want[g * n..(g + 1) * n]);
                }
                assert_eq!(got, want, "axpy rows n={n} rows={rows}");
            }
        }
    }

    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[test]
    fn the_sse2_row_dot_equals_the_scalar_kernel() {
        for n in [0usize, 1, 15, 16, 17, 48, 100] {
            for rows in [1usize, 6, 8, 9, 17] {
                let (a, b) =
                    (as_i8(pseudo_random_bytes(rows * n, 18)), as_i8(pseudo_random_bytes(n, 19)));
                let (mut got, mut want) = (vec![0i32; rows], vec![0i32; rows]);
                crate::kernels::vector::sse2::dot_i8_i8_rows(&a, &b, &mut got);
                dot_i8_i8_rows_scalar(&a, &b, &mut want);
                assert_eq!(got, want, "n={n} rows={rows}");
            }
        }
        let (a, b) = (vec![-128i8; 3 * 40], vec![-128i8; 40]);
        let mut got = [0i32; 3];
        crate::kernels::vector::sse2::dot_i8_i8_rows(&a, &b, &mut got);
        assert_eq!(got, [40 * 16384; 3]);
    }

    #[test]
    fn axpy_i8_keys_equals_one_axpy_i8_rows_per_key() {
        for d in [1usize, 5, 16, 48, 64, 100] {
            for rows in [1usize, 5, 6, 7, 16] {
                let n = 37;
                let values = as_i8(pseudo_random_bytes(n * d, 20));
                let scales = pseudo_random(n, 21);
                let keys = values.chunks_exact(d).zip(scales.iter().copied());
                let w = pseudo_random(rows * n, 22);
                let mut got = pseudo_random(rows * d, 23);
                let mut want = got.clone();
                axpy_i8_keys(&w, n, keys.clone(), &mut got);
                for (i, (q, s)) in keys.enumerate() {
                    let alpha: Vec<f32> = (0..rows).map(|g| w[g * n + i]).collect();
                    axpy_i8_rows(&alpha, q, s, &mut want);
                }
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "d={d} rows={rows}");
            }
        }
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn simd_twins_are_bit_identical_to_the_scalar_vector_kernels() {
        use crate::kernels::test_util::same;
        use crate::kernels::vector::simd128 as simd;
        for n in [0usize, 1, 5, 15, 16, 17, 31, 64, 100, 768, 1001] {
            let (a, b) = (pseudo_random(n, 7 + n as u32), pseudo_random(n, 8));
            let (qa, qb) = (as_i8(pseudo_random_bytes(n, 9)), as_i8(pseudo_random_bytes(n, 10)));
            assert!(same(simd::dot(&a, &b), dot_scalar(&a, &b)), "dot n={n}");
            assert!(
                same(simd::dot_i8(&a, &qa, 0.01), dot_i8_scalar(&a, &qa, 0.01)),
                "dot_i8 n={n}"
            );
            assert_eq!(simd::dot_i8_i8(&qa, &qb), dot_i8_i8_scalar(&qa, &qb), "dot_i8_i8 n={n}");
            let (mut y1, mut y2) = (b.clone(), b.clone());
            simd::axpy(0.3, &a, &mut y1);
            axpy_scalar(0.3, &a, &mut y2);
            assert_eq!(y1, y2, "axpy n={n}");
            let (mut y1, mut y2) = (b.clone(), b.clone());
            simd::axpy_i8(0.3, &qa, 0.02, &mut y1);
            axpy_i8_scalar(0.3, &qa, 0.02, &mut y2);
            assert_eq!(y1, y2, "axpy_i8 n={n}");
            let rows = 7;
            let qr = as_i8(pseudo_random_bytes(rows * n, 15));
            let (mut d1, mut d2) = (vec![0i32; rows], vec![0i32; rows]);
            simd::dot_i8_i8_rows(&qr, &qb, &mut d1);
            dot_i8_i8_rows_scalar(&qr, &qb, &mut d2);
            assert_eq!(d1, d2, "dot_i8_i8_rows n={n}");
            let alpha = pseudo_random(rows, 16);
            let (mut y1, mut y2) = (pseudo_random(rows * n, 17), pseudo_random(rows * n, 17));
            simd::axpy_i8_rows(&alpha, &qa, 0.02, &mut y1);
            axpy_i8_rows_scalar(&alpha, &qa, 0.02, &mut y2);
            assert_eq!(y1, y2, "axpy_i8_rows n={n}");
        }
    }
}
