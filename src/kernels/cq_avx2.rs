//! x86-64 AVX2 variant of the CQ matvec/matmul in [`super::cq`], chosen at run time (needs `std`
//! for feature detection) and bit-identical to the scalar kernel.
//!
//! Decoding keeps the codebook in two 8-float registers: the codes of 8 weights (at most 32 bits)
//! are broadcast as one word, `vpsrlvd` moves each lane's code to the bottom, and `vpermps` looks
//! it up; at 4 bits `vblendvps` picks the upper half for codes 8..15 — a handful of register
//! operations per 8 weights instead of one memory lookup per code.
//!
//! Accumulation follows the shared order documented in `cq.rs`: the 16 lane sums of a group are
//! two 8-float accumulators (lanes 0..8 and 8..16), combined `(l[i] + l[4+i]) + (l[8+i] +
//! l[12+i])`, scaled by the group norm into a running 4-lane row sum, finished
//! `(r0 + r2) + (r1 + r3)`. No fused multiply-add: products round before they are added.
use core::arch::x86_64::*;

use super::cq::{CqMatrix, CqWidth, MAX_GROUP, TILE};
use super::f16;

/// Runs `matmul_rotated` with AVX2 when the CPU has it; false otherwise (the caller then runs
/// the scalar kernel).
pub(crate) fn matmul_rotated(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) -> bool {
    if !std::is_x86_feature_detected!("avx2") {
        return false;
    }
    // SAFETY: AVX2 is present (checked above); the caller checked the slice lengths.
    unsafe {
        match m.width() {
            CqWidth::B1 => run::<1>(m, xr, n, out),
            CqWidth::B2 | CqWidth::Ternary => run::<2>(m, xr, n, out),
            CqWidth::B3 => run::<3>(m, xr, n, out),
            CqWidth::B4 => run::<4>(m, xr, n, out),
        }
    }
    true
}

#[target_feature(enable = "avx2")]
unsafe fn run<const BITS: usize>(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) {
    // SAFETY: AVX2 (this function's feature).
    unsafe {
        let cb = Codebook::<BITS>::new(m.table());
        if n == 1 {
            matvec(m, &cb, xr, out);
        } else {
            matmul(m, &cb, xr, n, out);
        }
    }
}

/// The codebook of a `BITS`-bit width as two 8-float halves.
struct Codebook<const BITS: usize> {
    lo: __m256,
    hi: __m256,
}

impl<const BITS: usize> Codebook<BITS> {
    /// Packed bytes of 16 codes.
    const BYTES: usize = 2 * BITS;

    #[target_feature(enable = "avx2")]
    unsafe fn new(table: &[f32; 16]) -> Self {
        // SAFETY: 16 floats; AVX2 (this function's feature).
        unsafe { Codebook { lo: _mm256_loadu_ps(table.as_ptr()), hi: _mm256_loadu_ps(table.as_ptr().add(8)) } }
    }

    /// Weights of the 16 codes in the `BYTES` bytes at `p`, in code order (codes 0..8, 8..16).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn weights(&self, p: *const u8) -> [__m256; 2] {
        let bits = BITS as i32;
        let shifts = _mm256_setr_epi32(0, bits, 2 * bits, 3 * bits, 4 * bits, 5 * bits, 6 * bits, 7 * bits);
        let mask = _mm256_set1_epi32((1 << BITS) - 1);
        let look = |half: usize| {
            // The 8 codes of this half: 8 * BITS bits (BITS bytes) from byte half * BITS.
            // SAFETY: those bytes lie inside the `BYTES` the caller vouches for.
            let word = unsafe { word::<BITS>(p.add(half * BITS)) };
            let idx = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(word as i32), shifts), mask);
            let w = _mm256_permutevar8x32_ps(self.lo, idx);
            if BITS == 4 {
                let from_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(idx));
                _mm256_blendv_ps(w, _mm256_permutevar8x32_ps(self.hi, idx), from_hi)
            } else {
                w
            }
        };
        [look(0), look(1)]
    }
}

/// The `BITS` bytes at `p` (8 codes) as the low bits of a word.
/// SAFETY: `BITS` bytes at `p` are readable.
#[inline(always)]
unsafe fn word<const BITS: usize>(p: *const u8) -> u32 {
    // SAFETY: BITS bytes (caller).
    unsafe {
        match BITS {
            1 => u32::from(*p),
            2 => u32::from(core::ptr::read_unaligned(p as *const u16)),
            3 => u32::from(core::ptr::read_unaligned(p as *const u16)) | u32::from(*p.add(2)) << 16,
            _ => core::ptr::read_unaligned(p as *const u32),
        }
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
unsafe fn matvec<const BITS: usize>(m: &CqMatrix<'_>, cb: &Codebook<BITS>, xr: &[f32], out: &mut [f32]) {
    let (groups, row_bytes, chunks) = (m.groups_per_row(), m.row_bytes(), m.group() / 16);
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == m.rows() * row_bytes && xr.len() >= m.cols_padded());
    for (r, o) in out[..m.rows()].iter_mut().enumerate() {
        let row_norms = &norms[r * groups * 2..][..groups * 2];
        // SAFETY: the row's codes are `row_bytes = groups * chunks * BYTES` bytes of `packed` (checked
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
                    p = p.add(Codebook::<BITS>::BYTES);
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
unsafe fn matmul<const BITS: usize>(m: &CqMatrix<'_>, cb: &Codebook<BITS>, xr: &[f32], n: usize, out: &mut [f32]) {
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
                    let bytes = Codebook::<BITS>::BYTES;
                    let p = packed.as_ptr().add(r * row_bytes + gi * chunks * bytes);
                    for c in 0..chunks {
                        let [w0, w1] = cb.weights(p.add(bytes * c));
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
