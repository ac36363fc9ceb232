//! wasm32 SIMD128 twin of the A8 integer CQ product of 4-bit matrices in [`super::cq_a8`] (groups
//! up to 256; larger groups run the scalar kernel). Integer group sums are exact,
//! so any summation order gives the scalar kernel's bits; the f32 steps follow it exactly.
//!
//! Per 16 codes: their 8 packed bytes split into nibbles (`v128.and`, `u8x16.shr`) and
//! interleave into 16 code bytes; per level plane two `i8x16.swizzle`s look up the low and high
//! bytes of the 16 i16 levels and a byte shuffle pairs them into two i16x8 vectors, each
//! `i32x4.dot_i16x8_s`-multiplied with the rotated input, narrowed once per call to i16.
use core::arch::wasm32::*;

use super::cq::{CqMatrix, TILE};
use super::cq_a8::{matmul_a8_scalar, IntLevels, I16_GROUP_MAX};
use super::f16;

/// i16 rotated values staged at once (a stripe of columns for a tile of inputs): 16 KiB of stack.
const STAGE: usize = 8192;

/// The two byte tables of each level plane: `i8x16.swizzle` operands.
struct Tables {
    hi: [v128; 2],
    lo: [v128; 2],
}

impl Tables {
    fn new(lv: &IntLevels) -> Self {
        let bytes = |p: &[i16; 16], shift: u32| {
            let b: [u8; 16] = core::array::from_fn(|i| (p[i] as u16 >> shift) as u8);
            // SAFETY: 16 bytes.
            unsafe { v128_load(b.as_ptr() as *const v128) }
        };
        Tables { hi: [bytes(&lv.hi, 0), bytes(&lv.hi, 8)], lo: [bytes(&lv.lo, 0), bytes(&lv.lo, 8)] }
    }
}

/// The 16 codes in the 8 packed bytes at `p`, one per byte, in code order.
/// SAFETY: 8 readable bytes at `p`.
#[inline(always)]
unsafe fn codes16(p: *const u8) -> v128 {
    // SAFETY: 8 bytes (caller).
    let v = unsafe { v128_load64_zero(p as *const u64) };
    let (lo, hi) = (v128_and(v, u8x16_splat(15)), u8x16_shr(v, 4));
    i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(lo, hi)
}

/// One plane's i16 levels of 16 codes, as codes 0..8 and 8..16.
#[inline(always)]
fn levels16(bytes: &[v128; 2], codes: v128) -> [v128; 2] {
    let (l, h) = (i8x16_swizzle(bytes[0], codes), i8x16_swizzle(bytes[1], codes));
    [
        i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(l, h),
        i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(l, h),
    ]
}

#[inline(always)]
fn hsum(v: v128) -> i32 {
    let s = i32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
    i32x4_extract_lane::<0>(s).wrapping_add(i32x4_extract_lane::<1>(s))
}

pub(crate) fn matmul_a8(m: &CqMatrix<'_>, lv: &IntLevels, y: &[i32], scales: &[f32], n: usize, out: &mut [f32]) {
    if m.group() > I16_GROUP_MAX {
        return matmul_a8_scalar(m, lv, y, scales, n, out);
    }
    let tables = Tables::new(lv);
    let (g, cp, rows) = (m.group(), m.cols_padded(), m.rows());
    out[..n * rows].fill(0.0);
    let mut stage = [0i16; STAGE];
    let mut j0 = 0;
    while j0 < n {
        let t = TILE.min(n - j0);
        // Whole groups per stripe; at least one (t * G <= 16 * 256 <= STAGE).
        let width = (STAGE / t / g * g).min(cp);
        let mut c0 = 0;
        while c0 < cp {
            let w = width.min(cp - c0);
            for jj in 0..t {
                let src = &y[(j0 + jj) * cp + c0..][..w];
                // Exact: rotated values of groups up to 256 fit an i16 (bounds in cq_a8.rs).
                for (d, &v) in stage[jj * w..(jj + 1) * w].iter_mut().zip(src) {
                    *d = v as i16;
                }
            }
            stripe(m, lv, &tables, &stage[..t * w], c0 / g, w / g, j0, t, out);
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

/// Adds `Σ_g value(r, g) · norm(r, g)` over groups `g0..g0 + gs` (staged as `stage`, `gs * G`
/// values per input) to `out` for inputs `j0..j0 + t`, in group order.
#[allow(clippy::too_many_arguments)]
fn stripe(m: &CqMatrix<'_>, lv: &IntLevels, tb: &Tables, stage: &[i16], g0: usize, gs: usize, j0: usize, t: usize, out: &mut [f32]) {
    let (g, rows, groups, row_bytes) = (m.group(), m.rows(), m.groups_per_row(), m.row_bytes());
    let (chunks, w) = (g / 16, gs * g);
    let mut wbuf = [[i16x8_splat(0); 4]; I16_GROUP_MAX / 16];
    for r in 0..rows {
        let norms = &m.norms()[r * groups * 2..][..groups * 2];
        for gi in g0..g0 + gs {
            // SAFETY: group gi's `chunks * 8` bytes lie inside row r (checked at construction).
            let p = unsafe { m.packed().as_ptr().add(r * row_bytes + gi * chunks * 8) };
            let norm = f16::at(norms, gi);
            let at = (gi - g0) * g;
            if t == 1 {
                let ys = &stage[at..at + g];
                let (mut ah, mut al) = (i32x4_splat(0), i32x4_splat(0));
                for c in 0..chunks {
                    // SAFETY: 8 bytes per chunk inside the group; `ys` holds 16 values per chunk.
                    unsafe {
                        let codes = codes16(p.add(8 * c));
                        let [h0, h1] = levels16(&tb.hi, codes);
                        let [l0, l1] = levels16(&tb.lo, codes);
                        let y0 = v128_load(ys.as_ptr().add(16 * c) as *const v128);
                        let y1 = v128_load(ys.as_ptr().add(16 * c + 8) as *const v128);
                        ah = i32x4_add(ah, i32x4_add(i32x4_dot_i16x8(h0, y0), i32x4_dot_i16x8(h1, y1)));
                        al = i32x4_add(al, i32x4_add(i32x4_dot_i16x8(l0, y0), i32x4_dot_i16x8(l1, y1)));
                    }
                }
                out[j0 * rows + r] += lv.combine(hsum(ah), hsum(al)) * norm;
                continue;
            }
            for (c, wc) in wbuf[..chunks].iter_mut().enumerate() {
                // SAFETY: 8 bytes per chunk inside the group.
                let codes = unsafe { codes16(p.add(8 * c)) };
                let [h0, h1] = levels16(&tb.hi, codes);
                let [l0, l1] = levels16(&tb.lo, codes);
                *wc = [h0, h1, l0, l1];
            }
            for jj in 0..t {
                let ys = &stage[jj * w + at..][..g];
                let (mut ah, mut al) = (i32x4_splat(0), i32x4_splat(0));
                for (c, wc) in wbuf[..chunks].iter().enumerate() {
                    // SAFETY: `ys` holds 16 values per chunk.
                    unsafe {
                        let y0 = v128_load(ys.as_ptr().add(16 * c) as *const v128);
                        let y1 = v128_load(ys.as_ptr().add(16 * c + 8) as *const v128);
                        ah = i32x4_add(ah, i32x4_add(i32x4_dot_i16x8(wc[0], y0), i32x4_dot_i16x8(wc[1], y1)));
                        al = i32x4_add(al, i32x4_add(i32x4_dot_i16x8(wc[2], y0), i32x4_dot_i16x8(wc[3], y1)));
                    }
                }
                out[(j0 + jj) * rows + r] += lv.combine(hsum(ah), hsum(al)) * norm;
            }
        }
    }
}
