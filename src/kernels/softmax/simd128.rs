//! wasm32 SIMD128 twin of [`crate::kernels::softmax`], bit-identical to the scalar kernel.
use core::arch::wasm32::*;

use crate::kernels::softmax::{exp, max_scalar, EXP_MAX, EXP_MIN, LN2_HI, LN2_LO, LOG2E, P};

/// Lane-wise twin of the scalar `exp`, operation for operation.
#[inline(always)]
pub(crate) fn exp4(x: v128) -> v128 {
    // `pmax`/`pmin` are the comparisons-and-select of the scalar clamp (NaN passes through).
    let c = f32x4_pmin(f32x4_pmax(x, f32x4_splat(EXP_MIN)), f32x4_splat(EXP_MAX));
    let n = f32x4_floor(f32x4_add(f32x4_mul(c, f32x4_splat(LOG2E)), f32x4_splat(0.5)));
    let r = f32x4_sub(
        f32x4_sub(c, f32x4_mul(n, f32x4_splat(LN2_HI))),
        f32x4_mul(n, f32x4_splat(LN2_LO)),
    );
    let mut p = f32x4_splat(P[0]);
    for &k in &P[1..] {
        p = f32x4_add(f32x4_mul(p, r), f32x4_splat(k));
    }
    let y = f32x4_add(f32x4_add(f32x4_mul(p, f32x4_mul(r, r)), r), f32x4_splat(1.0));
    let two_n = i32x4_shl(i32x4_add(i32x4_trunc_sat_f32x4(n), i32x4_splat(127)), 23);
    v128_bitselect(f32x4_splat(0.0), f32x4_mul(y, two_n), f32x4_lt(x, f32x4_splat(EXP_MIN)))
}

/// `exp4` on an array (twin tests).
#[cfg(test)]
pub(crate) fn exp4_array(v: [f32; 4]) -> [f32; 4] {
    let mut o = [0.0f32; 4];
    // SAFETY: loads from and stores to 4-float arrays.
    unsafe { v128_store(o.as_mut_ptr() as *mut v128, exp4(v128_load(v.as_ptr() as *const v128))) };
    o
}

pub(crate) fn softmax(x: &mut [f32]) {
    // The maximum is order-independent; the scalar fold is fast enough next to the exponentials.
    let max = max_scalar(x);
    let m = f32x4_splat(max);
    let mut acc = [f32x4_splat(0.0); 4];
    let mut chunks = x.chunks_exact_mut(16);
    for c in &mut chunks {
        for (i, a) in acc.iter_mut().enumerate() {
            // SAFETY: 4 floats at 4*i within a 16-float chunk.
            unsafe {
                let p = c.as_mut_ptr().add(4 * i) as *mut v128;
                let e = exp4(f32x4_sub(v128_load(p), m));
                v128_store(p, e);
                *a = f32x4_add(*a, e);
            }
        }
    }
    // Tail: scalar exponentials (identical values) summed into their lanes k % 16.
    let mut lanes = [0.0f32; 16];
    for (k, v) in chunks.into_remainder().iter_mut().enumerate() {
        *v = exp(*v - max);
        lanes[k] = *v;
    }
    for (i, a) in acc.iter_mut().enumerate() {
        // SAFETY: 4 floats at 4*i of a 16-float array.
        *a = f32x4_add(*a, unsafe { v128_load(lanes.as_ptr().add(4 * i) as *const v128) });
    }
    let r = f32x4_add(f32x4_add(acc[0], acc[1]), f32x4_add(acc[2], acc[3]));
    let t = f32x4_add(r, i32x4_shuffle::<2, 3, 0, 1>(r, r));
    let inv = 1.0 / (f32x4_extract_lane::<0>(t) + f32x4_extract_lane::<1>(t));
    let s = f32x4_splat(inv);
    let mut chunks = x.chunks_exact_mut(4);
    for c in &mut chunks {
        // SAFETY: 4-float chunk.
        unsafe {
            let p = c.as_mut_ptr() as *mut v128;
            v128_store(p, f32x4_mul(v128_load(p), s));
        }
    }
    for v in chunks.into_remainder() {
        *v *= inv;
    }
}
