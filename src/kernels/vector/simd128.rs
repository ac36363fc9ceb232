//! wasm32 SIMD128 twins of [`crate::kernels::vector`], bit-identical to the scalar kernels (same lane order).
use core::arch::wasm32::*;

use crate::kernels::vector::{axpy_i8_scalar, axpy_scalar};

/// `(a0 + a1) + (a2 + a3)`, then `(r0 + r2) + (r1 + r3)`.
#[inline(always)]
fn finish(a: [v128; 4]) -> f32 {
    let r = f32x4_add(f32x4_add(a[0], a[1]), f32x4_add(a[2], a[3]));
    let t = f32x4_add(r, i32x4_shuffle::<2, 3, 0, 1>(r, r));
    f32x4_extract_lane::<0>(t) + f32x4_extract_lane::<1>(t)
}

/// Four f32x4 of 16 consecutive floats. SAFETY: `p` points to 16 readable floats.
#[inline(always)]
unsafe fn load16(p: *const f32) -> [v128; 4] {
    // SAFETY: 16 readable floats (caller).
    unsafe { core::array::from_fn(|i| v128_load(p.add(4 * i) as *const v128)) }
}

/// 16 int8 values widened to four f32x4. SAFETY: `p` points to 16 readable bytes.
#[inline(always)]
unsafe fn load16_i8(p: *const i8) -> [v128; 4] {
    // SAFETY: 16 readable bytes (caller).
    let v = unsafe { v128_load(p as *const v128) };
    let (lo, hi) = (i16x8_extend_low_i8x16(v), i16x8_extend_high_i8x16(v));
    [
        f32x4_convert_i32x4(i32x4_extend_low_i16x8(lo)),
        f32x4_convert_i32x4(i32x4_extend_high_i16x8(lo)),
        f32x4_convert_i32x4(i32x4_extend_low_i16x8(hi)),
        f32x4_convert_i32x4(i32x4_extend_high_i16x8(hi)),
    ]
}

#[inline(always)]
fn fma16(acc: &mut [v128; 4], a: [v128; 4], b: [v128; 4]) {
    for i in 0..4 {
        acc[i] = f32x4_add(acc[i], f32x4_mul(a[i], b[i]));
    }
}

/// The tail (fewer than 16 values) zero-padded to a full chunk: padding adds `0 * 0` to lanes
/// that never hold -0, so the lane sums equal the scalar kernel's.
fn pad16<T: Copy + Default>(tail: &[T]) -> [T; 16] {
    let mut buf = [T::default(); 16];
    buf[..tail.len()].copy_from_slice(tail);
    buf
}

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [f32x4_splat(0.0); 4];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        // SAFETY: 16-float chunks.
        unsafe { fma16(&mut acc, load16(x.as_ptr()), load16(y.as_ptr())) };
    }
    if !ta.is_empty() {
        let (x, y) = (pad16(ta), pad16(tb));
        // SAFETY: 16-float arrays.
        unsafe { fma16(&mut acc, load16(x.as_ptr()), load16(y.as_ptr())) };
    }
    finish(acc)
}

pub(crate) fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    let a = f32x4_splat(alpha);
    let (cx, mut cy) = (x.chunks_exact(4), y.chunks_exact_mut(4));
    let tx = cx.remainder();
    for (u, v) in cx.zip(&mut cy) {
        // SAFETY: 4-float chunks.
        unsafe {
            let r = f32x4_add(
                v128_load(v.as_ptr() as *const v128),
                f32x4_mul(a, v128_load(u.as_ptr() as *const v128)),
            );
            v128_store(v.as_mut_ptr() as *mut v128, r);
        }
    }
    axpy_scalar(alpha, tx, cy.into_remainder());
}

pub(crate) fn dot_i8(x: &[f32], q: &[i8], scale: f32) -> f32 {
    let mut acc = [f32x4_splat(0.0); 4];
    let (cx, cq) = (x.chunks_exact(16), q.chunks_exact(16));
    let (tx, tq) = (cx.remainder(), cq.remainder());
    for (u, v) in cx.zip(cq) {
        // SAFETY: 16-element chunks.
        unsafe { fma16(&mut acc, load16(u.as_ptr()), load16_i8(v.as_ptr())) };
    }
    if !tx.is_empty() {
        let (u, v) = (pad16(tx), pad16(tq));
        // SAFETY: 16-element arrays.
        unsafe { fma16(&mut acc, load16(u.as_ptr()), load16_i8(v.as_ptr())) };
    }
    finish(acc) * scale
}

pub(crate) fn axpy_i8(alpha: f32, q: &[i8], scale: f32, y: &mut [f32]) {
    let (a, s) = (f32x4_splat(alpha), f32x4_splat(scale));
    let (cq, mut cy) = (q.chunks_exact(16), y.chunks_exact_mut(16));
    let tq = cq.remainder();
    for (u, v) in cq.zip(&mut cy) {
        // SAFETY: 16-element chunks.
        unsafe {
            let w = load16_i8(u.as_ptr());
            for (i, wi) in w.into_iter().enumerate() {
                let p = v.as_mut_ptr().add(4 * i) as *mut v128;
                v128_store(p, f32x4_add(v128_load(p), f32x4_mul(a, f32x4_mul(wi, s))));
            }
        }
    }
    axpy_i8_scalar(alpha, tq, scale, cy.into_remainder());
}

pub(crate) fn dot_i8_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = i32x4_splat(0);
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        // SAFETY: 16-byte chunks.
        let (x, y) =
            unsafe { (v128_load(x.as_ptr() as *const v128), v128_load(y.as_ptr() as *const v128)) };
        acc = i32x4_add(acc, i32x4_dot_i16x8(i16x8_extend_low_i8x16(x), i16x8_extend_low_i8x16(y)));
        acc =
            i32x4_add(acc, i32x4_dot_i16x8(i16x8_extend_high_i8x16(x), i16x8_extend_high_i8x16(y)));
    }
    let mut s = i32x4_extract_lane::<0>(acc)
        .wrapping_add(i32x4_extract_lane::<1>(acc))
        .wrapping_add(i32x4_extract_lane::<2>(acc))
        .wrapping_add(i32x4_extract_lane::<3>(acc));
    for (&x, &y) in ta.iter().zip(tb) {
        s = s.wrapping_add(i32::from(x) * i32::from(y));
    }
    s
}

/// Rows of `a` per pass of [`dot_i8_i8_rows`]: their accumulators stay in registers or L1.
const DOT_ROWS: usize = 8;

pub(crate) fn dot_i8_i8_rows(a: &[i8], b: &[i8], out: &mut [i32]) {
    let d = b.len();
    let full = d - d % 16;
    for (g0, o) in (0..out.len()).step_by(DOT_ROWS).zip(out.chunks_mut(DOT_ROWS)) {
        let mut acc = [i32x4_splat(0); DOT_ROWS];
        for c in (0..full).step_by(16) {
            // SAFETY: 16-byte chunks inside b and inside each row of a (a.len() = rows * d).
            unsafe {
                let y = v128_load(b.as_ptr().add(c) as *const v128);
                let (yl, yh) = (i16x8_extend_low_i8x16(y), i16x8_extend_high_i8x16(y));
                for (g, acc) in acc[..o.len()].iter_mut().enumerate() {
                    let x = v128_load(a.as_ptr().add((g0 + g) * d + c) as *const v128);
                    *acc = i32x4_add(*acc, i32x4_dot_i16x8(i16x8_extend_low_i8x16(x), yl));
                    *acc = i32x4_add(*acc, i32x4_dot_i16x8(i16x8_extend_high_i8x16(x), yh));
                }
            }
        }
        for (g, (o, acc)) in o.iter_mut().zip(acc).enumerate() {
            let mut s = i32x4_extract_lane::<0>(acc)
                .wrapping_add(i32x4_extract_lane::<1>(acc))
                .wrapping_add(i32x4_extract_lane::<2>(acc))
                .wrapping_add(i32x4_extract_lane::<3>(acc));
            for (&x, &y) in a[(g0 + g) * d + full..(g0 + g + 1) * d].iter().zip(&b[full..]) {
                s = s.wrapping_add(i32::from(x) * i32::from(y));
            }
            *o = s;
        }
    }
}

pub(crate) fn axpy_i8_rows(alpha: &[f32], q: &[i8], scale: f32, y: &mut [f32]) {
    let (n, s) = (q.len(), f32x4_splat(scale));
    let full = n - n % 16;
    for c in (0..full).step_by(16) {
        // SAFETY: 16-element chunks inside q and inside each row of y (y.len() = rows * n).
        unsafe {
            let w = load16_i8(q.as_ptr().add(c)).map(|wi| f32x4_mul(wi, s));
            for (g, &a) in alpha.iter().enumerate() {
                let a = f32x4_splat(a);
                for (i, &wi) in w.iter().enumerate() {
                    let p = y.as_mut_ptr().add(g * n + c + 4 * i) as *mut v128;
                    v128_store(p, f32x4_add(v128_load(p), f32x4_mul(a, wi)));
                }
            }
        }
    }
    if full < n {
        for (g, &a) in alpha.iter().enumerate() {
            axpy_i8_scalar(a, &q[full..], scale, &mut y[g * n + full..(g + 1) * n]);
        }
    }
}
