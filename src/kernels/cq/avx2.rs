//! x86-64 AVX2 variant of the CQ matvec/matmul in [`crate::kernels::cq`], chosen at run time (needs `std`
//! for feature detection) and bit-identical to the scalar kernel.
//!
//! Rows go in pairs: an 8-float register holds the 4 lane sums of one row in its low half and
//! of the next row in its high half, so the shared order documented in `cq.rs` (one 4-lane
//! accumulator per (row, input) and group, lane i taking codes k ≡ i mod 4) runs unchanged on
//! both halves while each input vector (broadcast to both halves) serves two rows.
//!
//! Decoding keeps the codebook in two 8-float registers: the codes of 8 weights of a row (at most
//! 32 bits) are broadcast as one word, `vpsrlvd` moves each lane's code to the bottom, and
//! `vpermps` looks it up; at 4 bits `vblendvps` picks the upper half for codes 8..15 — a handful
//! of register operations per 8 weights instead of one memory lookup per code. `vperm2f128`
//! then pairs the two rows' 4-code halves.
//!
//! The matvec fuses decoding into the dot products, [`MV_PAIRS`] pairs at a time; the matmul
//! decodes [`MM_PAIRS`] pairs' group once per tile of inputs into a buffer and runs a
//! register-blocked micro-kernel of `MM_PAIRS` pairs x [`MM_INPUTS`] inputs over it. Sums are
//! scaled by the group norm into running vectors and finish `(r0 + r2) + (r1 + r3)`. No fused
//! multiply-add: products round before they are added.
use core::arch::x86_64::*;

use crate::kernels::cq::{CqMatrix, CqWidth, MAX_GROUP, TILE};
use crate::kernels::f16;

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

/// Row pairs per matvec block.
const MV_PAIRS: usize = 2;
/// Row pairs and inputs per matmul micro-kernel.
const MM_PAIRS: usize = 2;
const MM_INPUTS: usize = 4;

#[target_feature(enable = "avx2")]
unsafe fn run<const BITS: usize>(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) {
    // SAFETY: AVX2 (this function's feature).
    unsafe {
        let cb = Codebook::<BITS>::new(m.table());
        let rows = m.rows();
        let (mv, mm) = (2 * MV_PAIRS, 2 * MM_PAIRS);
        let mut wbuf = [_mm256_setzero_ps(); MM_PAIRS * MAX_GROUP / 4];
        // Whole blocks, then the rest as single pairs; an odd last row pairs with itself.
        let block = if n == 1 { mv } else { mm };
        let full = rows - rows % block;
        let mut r = 0;
        while r < rows {
            let pairs_left = if r < full { block / 2 } else { 1 };
            if n == 1 && pairs_left == MV_PAIRS {
                matvec::<BITS, MV_PAIRS>(m, &cb, xr, row_sets(r, rows), out);
            } else if n == 1 {
                matvec::<BITS, 1>(m, &cb, xr, row_sets(r, rows), out);
            } else if pairs_left == MM_PAIRS {
                matmul::<BITS, MM_PAIRS>(m, &cb, xr, n, row_sets(r, rows), &mut wbuf, out);
            } else {
                matmul::<BITS, 1>(m, &cb, xr, n, row_sets(r, rows), &mut wbuf, out);
            }
            r += 2 * pairs_left;
        }
    }
}

/// `P` sets of `K` consecutive rows from row `r` on (pairs here, fours in `avx512.rs`); past the
/// last row, the last row stands in (its result is written twice, the same value).
pub(in crate::kernels) fn row_sets<const K: usize, const P: usize>(
    r: usize,
    rows: usize,
) -> [[usize; K]; P] {
    core::array::from_fn(|p| core::array::from_fn(|k| (r + K * p + k).min(rows - 1)))
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
        unsafe {
            Codebook {
                lo: _mm256_loadu_ps(table.as_ptr()),
                hi: _mm256_loadu_ps(table.as_ptr().add(8)),
            }
        }
    }

    /// Weights of the 8 codes in the low `8 * BITS` bits of `word`, in code order.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn look(&self, word: u32) -> __m256 {
        let bits = BITS as i32;
        let shifts =
            _mm256_setr_epi32(0, bits, 2 * bits, 3 * bits, 4 * bits, 5 * bits, 6 * bits, 7 * bits);
        let mask = _mm256_set1_epi32((1 << BITS) - 1);
        let idx = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(word as i32), shifts), mask);
        let w = _mm256_permutevar8x32_ps(self.lo, idx);
        if BITS == 4 {
            let from_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(idx));
            _mm256_blendv_ps(w, _mm256_permutevar8x32_ps(self.hi, idx), from_hi)
        } else {
            w
        }
    }

    /// Weights of the 16 codes at `a` (one row) and `b` (another row) as 4 chunks of 4 codes
    /// each: chunk `c` holds row a's codes `4c..4c + 4` in its low half, row b's in its high half.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn pair(&self, a: *const u8, b: *const u8) -> [__m256; 4] {
        // SAFETY: each block's BYTES bytes are readable (caller); AVX2 (this function's feature).
        unsafe {
            let [a0, a1] = [0, BITS].map(|o| self.look(word::<BITS>(a.add(o))));
            let [b0, b1] = [0, BITS].map(|o| self.look(word::<BITS>(b.add(o))));
            [
                _mm256_permute2f128_ps::<0x20>(a0, b0),
                _mm256_permute2f128_ps::<0x31>(a0, b0),
                _mm256_permute2f128_ps::<0x20>(a1, b1),
                _mm256_permute2f128_ps::<0x31>(a1, b1),
            ]
        }
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

/// `(r0 + r2) + (r1 + r3)`.
#[target_feature(enable = "avx2")]
#[inline]
pub(in crate::kernels) unsafe fn finish(r: __m128) -> f32 {
    let t = _mm_add_ps(r, _mm_movehl_ps(r, r));
    _mm_cvtss_f32(t) + _mm_cvtss_f32(_mm_shuffle_ps::<1>(t, t))
}

/// The group norms of a pair broadcast to its halves.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pair_norm(norms: &[u8], groups: usize, pair: [usize; 2], gi: usize) -> __m256 {
    let (a, b) =
        (f16::at(&norms[pair[0] * groups * 2..], gi), f16::at(&norms[pair[1] * groups * 2..], gi));
    _mm256_setr_ps(a, a, a, a, b, b, b, b)
}

/// Writes the finished sums of a pair's running vector `r` for input `j` (`out` row-major by input).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store_pair(r: __m256, pair: [usize; 2], j: usize, rows: usize, out: &mut [f32]) {
    // SAFETY: AVX2 (this function's feature).
    unsafe {
        out[j * rows + pair[0]] = finish(_mm256_castps256_ps128(r));
        out[j * rows + pair[1]] = finish(_mm256_extractf128_ps::<1>(r));
    }
}

/// Fused decode + dot of `P` row pairs.
#[target_feature(enable = "avx2")]
unsafe fn matvec<const BITS: usize, const P: usize>(
    m: &CqMatrix<'_>,
    cb: &Codebook<BITS>,
    xr: &[f32],
    pairs: [[usize; 2]; P],
    out: &mut [f32],
) {
    let (groups, row_bytes, blocks) = (m.groups_per_row(), m.row_bytes(), m.group() / 16);
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == m.rows() * row_bytes && xr.len() >= m.cols_padded());
    // SAFETY: every paired row exists; its codes are `row_bytes = groups * blocks * BYTES` bytes of
    // `packed` (checked at construction); x offsets stay below cols_padded <= xr.len().
    unsafe {
        let mut p: [[*const u8; 2]; P] =
            core::array::from_fn(|i| pairs[i].map(|r| packed.as_ptr().add(r * row_bytes)));
        let mut x = xr.as_ptr();
        let mut racc = [_mm256_setzero_ps(); P];
        for gi in 0..groups {
            let mut acc = [_mm256_setzero_ps(); P];
            for _ in 0..blocks {
                let xv: [__m256; 4] = core::array::from_fn(|c| {
                    _mm256_broadcast_ps(&*(x.add(4 * c) as *const __m128))
                });
                for i in 0..P {
                    let w = cb.pair(p[i][0], p[i][1]);
                    for c in 0..4 {
                        acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(w[c], xv[c]));
                    }
                    p[i] = p[i].map(|q| q.add(Codebook::<BITS>::BYTES));
                }
                x = x.add(16);
            }
            for i in 0..P {
                racc[i] = _mm256_add_ps(
                    racc[i],
                    _mm256_mul_ps(acc[i], pair_norm(norms, groups, pairs[i], gi)),
                );
            }
        }
        for i in 0..P {
            store_pair(racc[i], pairs[i], 0, m.rows(), out);
        }
    }
}

/// `P` row pairs for every input: per tile of up to `TILE` inputs and group, the pairs' codes are
/// decoded once into `wbuf` (chunk `c` of pair `i` at `c * P + i`), then the micro-kernel runs
/// [`MM_INPUTS`] inputs at a time, the last few one by one.
#[target_feature(enable = "avx2")]
unsafe fn matmul<const BITS: usize, const P: usize>(
    m: &CqMatrix<'_>,
    cb: &Codebook<BITS>,
    xr: &[f32],
    n: usize,
    pairs: [[usize; 2]; P],
    wbuf: &mut [__m256],
    out: &mut [f32],
) {
    let (g, groups, row_bytes, cp, rows) =
        (m.group(), m.groups_per_row(), m.row_bytes(), m.cols_padded(), m.rows());
    let (packed, norms) = (m.packed(), m.norms());
    let (blocks, vecs) = (g / 16, g / 4);
    debug_assert!(packed.len() == rows * row_bytes && xr.len() >= n * cp && out.len() >= n * rows);
    let wbuf = &mut wbuf[..vecs * P];
    let mut j0 = 0;
    while j0 < n {
        let t = TILE.min(n - j0);
        let mut racc = [[_mm256_setzero_ps(); TILE]; P];
        for gi in 0..groups {
            for (i, pair) in pairs.iter().enumerate() {
                // SAFETY: group gi's codes lie inside each paired row's `row_bytes` (checked at
                // construction); AVX2 (this function's feature).
                unsafe {
                    let bytes = Codebook::<BITS>::BYTES;
                    let [pa, pb] =
                        pair.map(|r| packed.as_ptr().add(r * row_bytes + gi * blocks * bytes));
                    for bi in 0..blocks {
                        let w = cb.pair(pa.add(bi * bytes), pb.add(bi * bytes));
                        for c in 0..4 {
                            wbuf[(4 * bi + c) * P + i] = w[c];
                        }
                    }
                }
            }
            // SAFETY: AVX2 (this function's feature).
            let norm: [__m256; P] =
                core::array::from_fn(|i| unsafe { pair_norm(norms, groups, pairs[i], gi) });
            let x = &xr[j0 * cp + gi * g..];
            let mut jj = 0;
            while jj < t {
                // SAFETY: AVX2 (this function's feature).
                unsafe {
                    if jj + MM_INPUTS <= t {
                        let s = micro::<P, MM_INPUTS>(wbuf, &x[jj * cp..], cp, vecs);
                        for i in 0..P {
                            for j in 0..MM_INPUTS {
                                racc[i][jj + j] =
                                    _mm256_add_ps(racc[i][jj + j], _mm256_mul_ps(s[i][j], norm[i]));
                            }
                        }
                        jj += MM_INPUTS;
                    } else {
                        let s = micro::<P, 1>(wbuf, &x[jj * cp..], cp, vecs);
                        for i in 0..P {
                            racc[i][jj] =
                                _mm256_add_ps(racc[i][jj], _mm256_mul_ps(s[i][0], norm[i]));
                        }
                        jj += 1;
                    }
                }
            }
        }
        for i in 0..P {
            for (jj, acc) in racc[i][..t].iter().enumerate() {
                // SAFETY: AVX2 (this function's feature).
                unsafe { store_pair(*acc, pairs[i], j0 + jj, rows, out) };
            }
        }
        j0 += t;
    }
}

/// One group's lane sums of `P` row pairs x `J` inputs: chunk `c` of pair `i` is `w[c * P + i]`,
/// input `j`'s group starts at `x[j * stride]`; `vecs` 4-code chunks per group.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn micro<const P: usize, const J: usize>(
    w: &[__m256],
    x: &[f32],
    stride: usize,
    vecs: usize,
) -> [[__m256; J]; P] {
    assert!(w.len() >= vecs * P && x.len() >= (J - 1) * stride + 4 * vecs);
    let mut acc = [[_mm256_setzero_ps(); J]; P];
    // SAFETY: the bounds above; AVX2 (this function's feature).
    unsafe {
        let (w, x) = (w.as_ptr(), x.as_ptr());
        for c in 0..vecs {
            let wv: [__m256; P] = core::array::from_fn(|i| *w.add(c * P + i));
            // Indexes, not iterators: `acc` is indexed by row then column.
            #[allow(clippy::needless_range_loop)]
            for j in 0..J {
                let xv = _mm256_broadcast_ps(&*(x.add(j * stride + 4 * c) as *const __m128));
                for i in 0..P {
                    acc[i][j] = _mm256_add_ps(acc[i][j], _mm256_mul_ps(wv[i], xv));
                }
            }
        }
    }
    acc
}
