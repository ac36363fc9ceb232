//! x86-64 AVX2 variant of the A8 integer CQ product of 4-bit matrices in [`crate::kernels::cq_a8`], chosen
//! at run time (needs `std` for feature detection): groups 32 to 256; other groups run the scalar
//! kernel. Integer group sums are exact, so any summation order gives the scalar
//! kernel's bits; the f32 steps follow it exactly.
//!
//! Per 32 codes: their 16 packed bytes, broadcast to both 128-bit lanes and shifted by 0 or 4
//! bits per lane, give the even codes (low lane) and odd codes (high lane) without a shuffle; per
//! level plane two `vpshufb`s look up the low and high bytes of the i16 levels and
//! `vpunpck{l,h}bw` pair them, lane-wise; `vpmaddwd` multiplies them with the rotated input,
//! narrowed to i16 once per call in that same order ([`stage_block`]).
use core::arch::x86_64::*;

use crate::kernels::cq::{CqMatrix, TILE};
use crate::kernels::cq_a8::{IntLevels, I16_GROUP_MAX};
use crate::kernels::f16;

/// i16 rotated values staged at once (a stripe of columns for a tile of inputs): 16 KiB of stack.
const STAGE: usize = 8192;

/// Runs the product of a 4-bit matrix with AVX2 (the caller checked the CPU has it) when the
/// group is 32 to 256; false otherwise (the caller then runs the scalar kernel).
pub(crate) fn matmul_a8(
    m: &CqMatrix<'_>,
    lv: &IntLevels,
    y: &[i32],
    scales: &[f32],
    n: usize,
    out: &mut [f32],
) -> bool {
    if !(32..=I16_GROUP_MAX).contains(&m.group()) {
        return false;
    }
    // SAFETY: AVX2 is present (checked above); the caller checked the slice lengths.
    unsafe { run(m, lv, y, scales, n, out) };
    true
}

/// The two byte tables of each level plane, in both 128-bit lanes: `vpshufb` operands.
struct Tables {
    hi: [__m256i; 2],
    lo: [__m256i; 2],
}

impl Tables {
    #[target_feature(enable = "avx2")]
    unsafe fn new(lv: &IntLevels) -> Self {
        let bytes = |p: &[i16; 16], shift: u32| {
            let b: [u8; 16] = core::array::from_fn(|i| (p[i] as u16 >> shift) as u8);
            // SAFETY: 16 bytes; AVX2 (this function's feature).
            unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(b.as_ptr() as *const __m128i)) }
        };
        Tables {
            hi: [bytes(&lv.hi, 0), bytes(&lv.hi, 8)],
            lo: [bytes(&lv.lo, 0), bytes(&lv.lo, 8)],
        }
    }
}

/// The 32 codes in the 16 packed bytes at `p`, one per byte: the even codes (low nibbles) in
/// the low 128-bit lane, the odd ones (high nibbles) in the high lane — no shuffle needed.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn codes32(p: *const u8) -> __m256i {
    // SAFETY: 16 bytes (caller).
    let v = unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(p as *const __m128i)) };
    let nibble = _mm256_srlv_epi32(v, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
    _mm256_and_si256(nibble, _mm256_set1_epi8(15))
}

/// One plane's i16 levels of 32 codes, in [`stage_block`]'s order: even codes 0..16 | odd
/// codes 0..16, then even codes 16..32 | odd codes 16..32.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn levels32(bytes: &[__m256i; 2], codes: __m256i) -> [__m256i; 2] {
    let (l, h) = (_mm256_shuffle_epi8(bytes[0], codes), _mm256_shuffle_epi8(bytes[1], codes));
    [_mm256_unpacklo_epi8(l, h), _mm256_unpackhi_epi8(l, h)]
}

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn hsum(v: __m256i) -> i32 {
    let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
    _mm_cvtsi128_si32(s).wrapping_add(_mm_extract_epi32::<1>(s))
}

#[target_feature(enable = "avx2")]
unsafe fn run(
    m: &CqMatrix<'_>,
    lv: &IntLevels,
    y: &[i32],
    scales: &[f32],
    n: usize,
    out: &mut [f32],
) {
    // SAFETY: AVX2 (this function's feature).
    let tables = unsafe { Tables::new(lv) };
    let (g, cp, rows) = (m.group(), m.cols_padded(), m.rows());
    out[..n * rows].fill(0.0);
    let mut stage = [0i16; STAGE];
    let mut j0 = 0;
    while j0 < n {
        let t = TILE.min(n - j0);
        let width = (STAGE / t / g * g).min(cp);
        let mut c0 = 0;
        while c0 < cp {
            let w = width.min(cp - c0);
            for jj in 0..t {
                let src = &y[(j0 + jj) * cp + c0..][..w];
                for (d, s) in
                    stage[jj * w..(jj + 1) * w].chunks_exact_mut(32).zip(src.chunks_exact(32))
                {
                    stage_block(s, d);
                }
            }
            // SAFETY: AVX2 (this function's feature).
            unsafe { stripe(m, lv, &tables, &stage[..t * w], c0 / g, w / g, j0, t, out) };
            c0 += w;
        }
        j0 += t;
    }
    for j in 0..n {
        let f = scales[j] * lv.unit;
        for o in &mut out[j * rows..(j + 1) * rows] {
            *o *= f;
        }
    }
}

/// Narrows 32 rotated values (exact: groups up to 256 fit an i16, bounds in cq_a8.rs) into the
/// lane order of [`levels32`]: even 0..16, odd 0..16, even 16..32, odd 16..32.
fn stage_block(src: &[i32], dst: &mut [i16]) {
    for (half, d) in dst.chunks_exact_mut(16).enumerate() {
        let s = &src[16 * half..][..16];
        for i in 0..8 {
            d[i] = s[2 * i] as i16;
            d[8 + i] = s[2 * i + 1] as i16;
        }
    }
}

/// The 32 staged values at `p`.
/// SAFETY: 32 readable i16 at `p`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn inputs32(p: *const i16) -> [__m256i; 2] {
    // SAFETY: 32 values (caller).
    unsafe {
        [_mm256_loadu_si256(p as *const __m256i), _mm256_loadu_si256(p.add(16) as *const __m256i)]
    }
}

/// Adds `Σ_g value(r, g) · norm(r, g)` over groups `g0..g0 + gs` (staged as `stage`, `gs * G`
/// values per input) to `out` for inputs `j0..j0 + t`, in group order.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2")]
unsafe fn stripe(
    m: &CqMatrix<'_>,
    lv: &IntLevels,
    tb: &Tables,
    stage: &[i16],
    g0: usize,
    gs: usize,
    j0: usize,
    t: usize,
    out: &mut [f32],
) {
    let (g, rows, groups, row_bytes) = (m.group(), m.rows(), m.groups_per_row(), m.row_bytes());
    let (blocks, w) = (g / 32, gs * g);
    let mut wbuf = [[_mm256_setzero_si256(); 4]; I16_GROUP_MAX / 32];
    for r in 0..rows {
        let norms = &m.norms()[r * groups * 2..][..groups * 2];
        for gi in g0..g0 + gs {
            let norm = f16::at(norms, gi);
            let at = (gi - g0) * g;
            // SAFETY: group gi's `blocks * 16` bytes lie inside row r (checked at construction);
            // the staged inputs hold 32 values per block; AVX2 (this function's feature).
            unsafe {
                let p = m.packed().as_ptr().add(r * row_bytes + gi * blocks * 16);
                if t == 1 {
                    let ys = stage.as_ptr().add(at);
                    let (mut ah, mut al) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                    for b in 0..blocks {
                        let codes = codes32(p.add(16 * b));
                        let [h0, h1] = levels32(&tb.hi, codes);
                        let [l0, l1] = levels32(&tb.lo, codes);
                        let [y0, y1] = inputs32(ys.add(32 * b));
                        ah = _mm256_add_epi32(
                            ah,
                            _mm256_add_epi32(_mm256_madd_epi16(h0, y0), _mm256_madd_epi16(h1, y1)),
                        );
                        al = _mm256_add_epi32(
                            al,
                            _mm256_add_epi32(_mm256_madd_epi16(l0, y0), _mm256_madd_epi16(l1, y1)),
                        );
                    }
                    out[j0 * rows + r] += lv.combine(hsum(ah), hsum(al)) * norm;
                    continue;
                }
                for (b, wb) in wbuf[..blocks].iter_mut().enumerate() {
                    let codes = codes32(p.add(16 * b));
                    let [h0, h1] = levels32(&tb.hi, codes);
                    let [l0, l1] = levels32(&tb.lo, codes);
                    *wb = [h0, h1, l0, l1];
                }
                for jj in 0..t {
                    let ys = stage.as_ptr().add(jj * w + at);
                    let (mut ah, mut al) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                    for (b, wb) in wbuf[..blocks].iter().enumerate() {
                        let [y0, y1] = inputs32(ys.add(32 * b));
                        ah = _mm256_add_epi32(
                            ah,
                            _mm256_add_epi32(
                                _mm256_madd_epi16(wb[0], y0),
                                _mm256_madd_epi16(wb[1], y1),
                            ),
                        );
                        al = _mm256_add_epi32(
                            al,
                            _mm256_add_epi32(
                                _mm256_madd_epi16(wb[2], y0),
                                _mm256_madd_epi16(wb[3], y1),
                            ),
                        );
                    }
                    out[(j0 + jj) * rows + r] += lv.combine(hsum(ah), hsum(al)) * norm;
                }
            }
        }
    }
}
