//! wasm32 SIMD128 twin of [`crate::kernels::hadamard::fwht_scalar`], bit-identical to it.
use core::arch::wasm32::*;

use crate::kernels::hadamard::{fwht_scalar, orthonormal_scale};

/// Orthonormal FWHT in place; `x.len()` is a power of two.
pub(crate) fn fwht(x: &mut [f32]) {
    let n = x.len();
    if n < 4 {
        fwht_scalar(x);
        return;
    }
    let p = x.as_mut_ptr();
    // SAFETY: every access below is at `i..i + 4` with `i + 4 <= n`, n a multiple of 4.
    unsafe {
        // Strides 1 and 2 inside each vector [a, b, c, d].
        let flip_odd = f32x4(0.0, -0.0, 0.0, -0.0);
        let flip_high = f32x4(0.0, 0.0, -0.0, -0.0);
        let mut i = 0;
        while i < n {
            let v = v128_load(p.add(i) as *const v128);
            let s1 = f32x4_add(
                i32x4_shuffle::<0, 0, 2, 2>(v, v),
                v128_xor(i32x4_shuffle::<1, 1, 3, 3>(v, v), flip_odd),
            );
            let s2 = f32x4_add(
                i32x4_shuffle::<0, 1, 0, 1>(s1, s1),
                v128_xor(i32x4_shuffle::<2, 3, 2, 3>(s1, s1), flip_high),
            );
            v128_store(p.add(i) as *mut v128, s2);
            i += 4;
        }
        let mut h = 4;
        while h < n {
            let mut base = 0;
            while base < n {
                let mut j = base;
                while j < base + h {
                    let u = v128_load(p.add(j) as *const v128);
                    let v = v128_load(p.add(j + h) as *const v128);
                    v128_store(p.add(j) as *mut v128, f32x4_add(u, v));
                    v128_store(p.add(j + h) as *mut v128, f32x4_sub(u, v));
                    j += 4;
                }
                base += 2 * h;
            }
            h *= 2;
        }
        let s = f32x4_splat(orthonormal_scale(n));
        let mut i = 0;
        while i < n {
            let v = v128_load(p.add(i) as *const v128);
            v128_store(p.add(i) as *mut v128, f32x4_mul(v, s));
            i += 4;
        }
    }
}
