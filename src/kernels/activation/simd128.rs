//! wasm32 SIMD128 twin of [`crate::kernels::activation`], bit-identical to the scalar kernels.
use core::arch::wasm32::*;

use crate::kernels::activation::{mul_sigmoid_scalar, silu_in_place_scalar};
use crate::kernels::softmax::simd128::exp4;

/// Lane-wise `1 / (1 + e^-x)`.
#[inline(always)]
fn sigmoid4(x: v128) -> v128 {
    f32x4_div(f32x4_splat(1.0), f32x4_add(f32x4_splat(1.0), exp4(f32x4_neg(x))))
}

pub(crate) fn silu_in_place(x: &mut [f32]) {
    let mut chunks = x.chunks_exact_mut(4);
    for c in &mut chunks {
        // SAFETY: 4-float chunk.
        unsafe {
            let p = c.as_mut_ptr() as *mut v128;
            let v = v128_load(p);
            v128_store(p, f32x4_mul(v, sigmoid4(v)));
        }
    }
    silu_in_place_scalar(chunks.into_remainder());
}

pub(crate) fn mul_sigmoid(y: &mut [f32], gate: &[f32]) {
    let (mut cy, cg) = (y.chunks_exact_mut(4), gate.chunks_exact(4));
    let tg = cg.remainder();
    for (v, g) in (&mut cy).zip(cg) {
        // SAFETY: 4-float chunks.
        unsafe {
            let p = v.as_mut_ptr() as *mut v128;
            v128_store(p, f32x4_mul(v128_load(p), sigmoid4(v128_load(g.as_ptr() as *const v128))));
        }
    }
    mul_sigmoid_scalar(cy.into_remainder(), tg);
}
