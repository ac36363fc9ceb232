//! x86-64 AVX2 variant of the 4-bit CQ matvec/matmul in [`super::cq`], chosen at run time (needs
//! `std` for feature detection) and bit-identical to the scalar kernel.
//!
//! Decoding uses the codebook as two 8-float registers: 16 codes are split from their nibbles
//! into 32-bit lanes, `vpermps` looks each one up in both halves and `vblendvps` keeps the half
//! that bit 3 of the code selects — a handful of register operations per 8 weights instead of
//! one memory lookup per code.
//!
//! Accumulation follows the shared order documented in `cq.rs`: the 16 lane sums of a group are
//! two 8-float accumulators (lanes 0..8 and 8..16), combined `(l[i] + l[4+i]) + (l[8+i] +
//! l[12+i])`, scaled by the group norm into a running 4-lane row sum, finished
//! `(r0 + r2) + (r1 + r3)`. No fused multiply-add: products round before they are added.
use core::arch::x86_64::*;

use super::cq::{CqMatrix, CqWidth, MAX_GROUP, TILE};
use super::f16;

/// Runs `matmul_rotated` with AVX2 when the CPU has it and the matrix is 4-bit; false otherwise
/// (the caller then runs the scalar kernel).
pub(crate) fn matmul_rotated(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) -> bool {
    if m.width() != CqWidth::B4 || !std::is_x86_feature_detected!("avx2") {
        return false;
    }
    // SAFETY: AVX2 is present (checked above); the caller checked the slice lengths.
    unsafe {
        if n == 1 {
            matvec(m, xr, out);
        } else {
            matmul(m, xr, n, out);
        }
    }
    true
}

/// The 4-bit codebook as two 8-float halves.
struct Codebook {
    lo: __m256,
    hi: __m256,
}

impl Codebook {
    #[target_feature(enable = "avx2")]
    unsafe fn new(table: &[f32; 16]) -> Self {
        // SAFETY: 16 floats; AVX2 (this function's feature).
        unsafe { Codebook { lo: _mm256_loadu_ps(table.as_ptr()), hi: _mm256_loadu_ps(table.as_ptr().add(8)) } }
    }

    /// Weights of the 16 codes in the 8 bytes at `p`, in code order (codes 0..8, 8..16).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn weights(&self, p: *const u8) -> [__m256; 2] {
        // SAFETY: 8 readable bytes (caller).
        let b = unsafe { _mm_loadl_epi64(p as *const __m128i) };
        let nib = _mm_set1_epi8(0x0f);
        let lo = _mm_and_si128(b, nib);
        let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), nib);
        let codes = _mm_unpacklo_epi8(lo, hi);
        let look = |c: __m128i| {
            let idx = _mm256_cvtepu8_epi32(c);
            let from_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(idx));
            _mm256_blendv_ps(_mm256_permutevar8x32_ps(self.lo, idx), _mm256_permutevar8x32_ps(self.hi, idx), from_hi)
        };
        [look(codes), look(_mm_unpackhi_epi64(codes, codes))]
    }
}

/// `(l[i] + l[4+i]) + (l[8+i] + l[12+i])` of a group's lane sums `a` = l[0..8], `b` = l[8..16].
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lanes_to_4(a: __m256, b: __m256) -> __m128 {
    _mm_add_ps(
        _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a)),
        _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps::<1>(b)),
    )
}

/// `(r0 + r2) + (r1 + r3)`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn finish(r: __m128) -> f32 {
    let t = _mm_add_ps(r, _mm_movehl_ps(r, r));
    _mm_cvtss_f32(t) + _mm_cvtss_f32(_mm_shuffle_ps::<1>(t, t))
}

/// Fused decode + dot per row.
#[target_feature(enable = "avx2")]
unsafe fn matvec(m: &CqMatrix<'_>, xr: &[f32], out: &mut [f32]) {
    // SAFETY: AVX2 (this function's feature).
    let cb = unsafe { Codebook::new(m.table()) };
    let (groups, row_bytes, chunks) = (m.groups_per_row(), m.row_bytes(), m.group() / 16);
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == m.rows() * row_bytes && xr.len() >= m.cols_padded());
    for (r, o) in out[..m.rows()].iter_mut().enumerate() {
        let row_norms = &norms[r * groups * 2..][..groups * 2];
        // SAFETY: the row's codes are `row_bytes = groups * chunks * 8` bytes of `packed` (checked
        // at construction); x offsets stay below cols_padded <= xr.len().
        unsafe {
            let mut p = packed.as_ptr().add(r * row_bytes);
            let mut x = xr.as_ptr();
            let mut racc = _mm_setzero_ps();
            for gi in 0..groups {
                let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
                for _ in 0..chunks {
                    let [w0, w1] = cb.weights(p);
                    a = _mm256_add_ps(a, _mm256_mul_ps(w0, _mm256_loadu_ps(x)));
                    b = _mm256_add_ps(b, _mm256_mul_ps(w1, _mm256_loadu_ps(x.add(8))));
                    p = p.add(8);
                    x = x.add(16);
                }
                racc = _mm_add_ps(racc, _mm_mul_ps(lanes_to_4(a, b), _mm_set1_ps(f16::at(row_norms, gi))));
            }
            *o = finish(racc);
        }
    }
}

/// Each group decoded once per tile of up to `TILE` inputs; per (input, row) the same sums as
/// [`matvec`].
#[target_feature(enable = "avx2")]
unsafe fn matmul(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) {
    // SAFETY: AVX2 (this function's feature).
    let cb = unsafe { Codebook::new(m.table()) };
    let (g, groups, row_bytes, cp, rows) = (m.group(), m.groups_per_row(), m.row_bytes(), m.cols_padded(), m.rows());
    let chunks = g / 16;
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == rows * row_bytes && xr.len() >= n * cp && out.len() >= n * rows);
    let mut wbuf = [_mm256_setzero_ps(); MAX_GROUP / 8];
    for r in 0..rows {
        let row_norms = &norms[r * groups * 2..][..groups * 2];
        let mut j0 = 0;
        while j0 < n {
            let t = TILE.min(n - j0);
            let mut racc = [_mm_setzero_ps(); TILE];
            for gi in 0..groups {
                // SAFETY: group gi's codes lie inside row r's `row_bytes` (checked at construction).
                unsafe {
                    let p = packed.as_ptr().add(r * row_bytes + gi * chunks * 8);
                    for c in 0..chunks {
                        let [w0, w1] = cb.weights(p.add(8 * c));
                        wbuf[2 * c] = w0;
                        wbuf[2 * c + 1] = w1;
                    }
                }
                let norm = _mm_set1_ps(f16::at(row_norms, gi));
                for (jj, acc) in racc[..t].iter_mut().enumerate() {
                    let xg = &xr[(j0 + jj) * cp + gi * g..][..g];
                    let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
                    for (w, x) in wbuf[..2 * chunks].chunks_exact(2).zip(xg.chunks_exact(16)) {
                        // SAFETY: `x` is a 16-float chunk.
                        unsafe {
                            a = _mm256_add_ps(a, _mm256_mul_ps(w[0], _mm256_loadu_ps(x.as_ptr())));
                            b = _mm256_add_ps(b, _mm256_mul_ps(w[1], _mm256_loadu_ps(x.as_ptr().add(8))));
                        }
                    }
                    // SAFETY: AVX2 (this function's feature).
                    *acc = _mm_add_ps(*acc, _mm_mul_ps(unsafe { lanes_to_4(a, b) }, norm));
                }
            }
            for (jj, acc) in racc[..t].iter().enumerate() {
                // SAFETY: AVX2 (this function's feature).
                out[(j0 + jj) * rows + r] = unsafe { finish(*acc) };
            }
            j0 += t;
        }
    }
}
