//! CQ products of int8 (A8) inputs in integer arithmetic: what upstream's deployment numerics
//! feed a CQ matrix (each A8 vector is `q * s`, `q` int8, one scale `s` per vector).
//!
//! The f32 kernels ([`super::cq`]) rotate the input per group with the orthonormal Hadamard and
//! dot it with codebook levels. For an A8 input the rotation is exact in integers: with `Hu` the
//! unnormalised ±1 Sylvester matrix, `H (q s)_g = s / sqrt(G) · y_g` where `y_g = Hu q_g`
//! ([`rotate_a8`]). Quantising the codebook levels to integers `w = round(level · c)` per matrix
//! ([`IntLevels`]) makes each group's dot product an exact integer sum, so
//!
//! ```text
//! out[r] = (s / (c · sqrt(G))) · Σ_g norm(r, g) · (Σ_k w[code(r, g, k)] · y_g[k])
//! ```
//!
//! with the group sums converted to f32 and scaled by their norm in group order, one running f32
//! sum per (input, row), times `s · unit` at the end. Integer sums do not depend on their order,
//! so the scalar kernel here and the AVX2 variant (4-bit matrices; where the integer kernels do
//! not pay, the f32 kernels run on the exactly rotated codes, see [`CqMatrix::matmul_a8`]) are
//! bit-identical whatever order they add products in. The one approximation against upstream's deploy numerics is the
//! codebook rounding, half a step of `1 / c` per level: 27 bits below the largest level at the
//! shipped group (128), 23 at 256, 17 at 1024 — finer than the f32 path's own rounding at the
//! groups models use. (Deploy numerics are chaotic: an int8 rounding that flips anywhere moves
//! the logits by ~1e-2, so a 16-bit codebook, a 1.5e-5 relative weight change, already lands
//! rows outside the fixtures' measured tolerance; an 8-bit one puts half of them outside.)
//!
//! ## Integer bounds (no i32 overflow for any input)
//! `|q| <= 128`, so `||q_g||_2 <= 128 sqrt(G)`; `Hu` is `sqrt(G)` times orthonormal, so
//! `||y_g||_2 <= 128 G` and every `|y_g[k]| <= 128 G` (`<= 2^17` at `G = 1024`: an i32; an i16 for
//! `G <= 256`, which the AVX2 kernel uses: for `G = 256` row 0 of `Hu` lies in
//! `[-128·256, 127·256] = [-32768, 32512]` and every other row, half +1 and half -1, in
//! `±(127 + 128)·128 = ±32640`; for `G <= 128`, `|y| <= 16384`). By Cauchy-Schwarz a group's
//! `Σ_k |v_k y_k| <= V · Σ_k |y_k| <= V · sqrt(G) · ||y_g||_2 <= V · 128 · G^1.5` for integer
//! weights `|v| <= V`. So each integer level is split in two planes `w = hi · 2^shift + lo`, both
//! within [`plane_max`]`(G)`, the largest `V` with `V · 128 · G^1.5 < 2^31` (and an i16): each
//! plane's group sum, in any order, stays in i32, and the two combine in i64.

// Off x86-64 (or without std) the integer kernel is the tests' reference only: the f32 kernels
// run on the rotated codes there (see `CqMatrix::matmul_a8`).
#![cfg_attr(not(all(feature = "std", target_arch = "x86_64")), allow(dead_code))]

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx2;
#[cfg(test)]
mod bench;
#[cfg(test)]
mod tests;

use super::cq::{CqMatrix, CqWidth, MAX_GROUP};
use super::{f16, hadamard, quant};

/// Largest group whose rotated values fit an i16 (see the bounds in the module docs).
pub(crate) const I16_GROUP_MAX: usize = 256;

/// The largest plane magnitude `V` with `V · 128 · G^1.5 < 2^31`, capped to an i16
/// (32767 up to G = 64, 11585 at 128, 4095 at 256, 1448 at 512, 511 at 1024).
pub(crate) fn plane_max(group: usize) -> i32 {
    let g = group as f64;
    let v = libm::floor(f64::from(i32::MAX) / (128.0 * g * libm::sqrt(g))) as i64;
    // Guard the floating-point edge: the product must stay below 2^31 in exact arithmetic.
    let fits = |v: i64| (v * 128).pow(2) as u128 * (group as u128).pow(3) < (1u128 << 62);
    let mut v = v.min(i64::from(i16::MAX));
    while !fits(v) {
        v -= 1;
    }
    v as i32
}

/// A matrix's codebook as integers: `table[code] ≈ (hi[code] · 2^shift + lo[code]) / c`, and
/// `unit = 1 / (c · sqrt(G))`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IntLevels {
    /// High and low planes of each stored code's level (unused codes 0), each within
    /// [`plane_max`] of the group.
    pub(crate) hi: [i16; 16],
    pub(crate) lo: [i16; 16],
    pub(crate) shift: u32,
    /// What one unit of `Σ w · y` is worth, before the input scale and the group norm.
    pub(crate) unit: f32,
}

impl IntLevels {
    /// The largest level magnitude maps to `(V - 1) · 2^shift` with `2^shift <= V = plane_max(G)`
    /// (a non-finite codebook gives NaN outputs, as the f32 kernels do).
    pub(crate) fn of(m: &CqMatrix<'_>) -> Self {
        let table = m.table();
        let v = plane_max(m.group());
        let shift = 31 - (v as u32).leading_zeros();
        let step = 1i64 << shift;
        let maxabs = table.iter().fold(0.0f64, |a, &l| a.max(libm::fabs(f64::from(l))));
        if maxabs == 0.0 || !maxabs.is_finite() || table.iter().any(|l| l.is_nan()) {
            let unit = if maxabs == 0.0 { 0.0 } else { f32::NAN };
            return IntLevels { hi: [0; 16], lo: [0; 16], shift, unit };
        }
        let c = (f64::from(v - 1) * step as f64) / maxabs;
        let w: [i64; 16] = core::array::from_fn(|i| libm::round(f64::from(table[i]) * c) as i64);
        // hi = w / 2^shift rounded to nearest, so |lo| <= 2^(shift-1) and |hi| <= V - 1.
        let hi: [i64; 16] = core::array::from_fn(|i| (w[i] + step / 2).div_euclid(step));
        let root_g = libm::sqrt(m.group() as f64);
        IntLevels {
            hi: core::array::from_fn(|i| hi[i] as i16),
            lo: core::array::from_fn(|i| (w[i] - hi[i] * step) as i16),
            shift,
            unit: (1.0 / (c * root_g)) as f32,
        }
    }

    /// A group's value from its two plane sums (exact in i64, one rounding to f32).
    #[inline(always)]
    pub(crate) fn combine(&self, hi: i32, lo: i32) -> f32 {
        ((i64::from(hi) << self.shift) + i64::from(lo)) as f32
    }
}

/// `y[..cols_padded]` = the int8 codes of `x` (one A8 vector, `cols` values), zero-padded, each
/// group replaced by its unnormalised Hadamard transform `Hu q_g`; returns the A8 scale `s`.
/// One rotation serves every matrix with the same `cols` and group (e.g. q, k, v and gate).
pub fn rotate_a8(m: &CqMatrix<'_>, x: &[f32], y: &mut [i32]) -> f32 {
    assert_eq!(x.len(), m.cols(), "rotate_a8: input length must equal cols");
    let y = &mut y[..m.cols_padded()];
    let scale = quant::quantize_i8(x, &mut y[..m.cols()]);
    y[m.cols()..].fill(0);
    for g in y.chunks_exact_mut(m.group()) {
        hadamard::butterflies(g);
    }
    scale
}

impl CqMatrix<'_> {
    /// `n` A8 products: input `j` is `y[j*cols_padded..][..cols_padded]` from [`rotate_a8`] with
    /// scale `scales[j]`; its result lands in `out[j*rows..][..rows]`. Batched and single inputs
    /// give the same bits within a build.
    ///
    /// The integer kernels run where they pay: 4-bit matrices on x86-64 with AVX2 (~0.85x the f32
    /// kernel's time at the shipped shapes), the scalar kernel for the groups the AVX2 variant
    /// leaves. Everywhere else (other widths, whose scalar integer kernel is ~10x slower than their
    /// f32 SIMD kernels; wasm, where a SIMD128 twin measured 1.1-1.5x the f32 kernel's time, see
    /// BENCHMARKS.md) the f32 kernels run on `H (q s) = s / sqrt(G) · y`, formed in `rot` (at
    /// least `n * cols_padded` floats).
    pub fn matmul_a8(&self, y: &[i32], scales: &[f32], n: usize, rot: &mut [f32], out: &mut [f32]) {
        let cp = self.cols_padded();
        assert!(y.len() >= n * cp, "matmul_a8: rotated inputs shorter than n * cols_padded");
        assert!(scales.len() >= n, "matmul_a8: fewer scales than inputs");
        assert!(out.len() >= n * self.rows(), "matmul_a8: output shorter than n * rows");
        dispatch!(x86: self.x86_matmul_a8(y, scales, n, out); Self::matmul_a8_f32; self, y, scales, n, rot, out)
    }

    /// The integer kernel of 4-bit matrices with AVX2 (the scalar one for the groups the AVX2
    /// variant leaves), split by rows like `matmul_rotated` (each row's integer sums
    /// unchanged); false for other widths or without AVX2.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    fn x86_matmul_a8(&self, y: &[i32], scales: &[f32], n: usize, out: &mut [f32]) -> bool {
        if self.width() != CqWidth::B4 || !std::is_x86_feature_detected!("avx2") {
            return false;
        }
        let lv = IntLevels::of(self);
        super::parallel::rows(self.rows(), n, n * self.cols_padded(), out, |range, part| {
            let m = self.rows_view(range);
            if !avx2::matmul_a8(&m, &lv, y, scales, n, part) {
                matmul_a8_scalar(&m, &lv, y, scales, n, part);
            }
        });
        true
    }

    /// The f32 kernels on the rotated int8 codes: `H (q s) = s / sqrt(G) · y`, formed in `rot`.
    fn matmul_a8_f32(&self, y: &[i32], scales: &[f32], n: usize, rot: &mut [f32], out: &mut [f32]) {
        let cp = self.cols_padded();
        assert!(rot.len() >= n * cp, "matmul_a8: rot shorter than n * cols_padded");
        let inv_root_g = hadamard::orthonormal_scale(self.group());
        for j in 0..n {
            let f = scales[j] * inv_root_g;
            for (r, &v) in rot[j * cp..(j + 1) * cp].iter_mut().zip(&y[j * cp..(j + 1) * cp]) {
                // Exact: |y| <= 2^17 (module docs).
                *r = v as f32 * f;
            }
        }
        self.matmul_rotated(&rot[..n * cp], n, out)
    }
}

/// Scalar [`CqMatrix::matmul_a8`] of a 4-bit matrix: the reference the twins are held equal to.
pub(crate) fn matmul_a8_scalar(
    m: &CqMatrix<'_>,
    lv: &IntLevels,
    y: &[i32],
    scales: &[f32],
    n: usize,
    out: &mut [f32],
) {
    debug_assert_eq!(m.width(), CqWidth::B4);
    let (g, cp, rows, groups) = (m.group(), m.cols_padded(), m.rows(), m.groups_per_row());
    let (row_bytes, group_bytes) = (m.row_bytes(), g / 2);
    let mut codes = [0u8; MAX_GROUP];
    for r in 0..rows {
        let packed = &m.packed()[r * row_bytes..][..row_bytes];
        let norms = &m.norms()[r * groups * 2..][..groups * 2];
        for j in 0..n {
            out[j * rows + r] = 0.0;
        }
        for gi in 0..groups {
            let codes = &mut codes[..g];
            for (d, &b) in codes.chunks_exact_mut(2).zip(&packed[gi * group_bytes..][..group_bytes])
            {
                d.copy_from_slice(&[b & 15, b >> 4]);
            }
            let norm = f16::at(norms, gi);
            for j in 0..n {
                let yg = &y[j * cp + gi * g..][..g];
                let (mut hi, mut lo) = (0i32, 0i32);
                for (&c, &v) in codes.iter().zip(yg) {
                    hi += i32::from(lv.hi[usize::from(c)]) * v;
                    lo += i32::from(lv.lo[usize::from(c)]) * v;
                }
                out[j * rows + r] += lv.combine(hi, lo) * norm;
            }
        }
        for j in 0..n {
            out[j * rows + r] *= scales[j] * lv.unit;
        }
    }
}
