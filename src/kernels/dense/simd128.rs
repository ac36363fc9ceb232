//! wasm32 SIMD128 twin of [`crate::kernels::dense`]: 32 output columns in 8 f32x4 accumulators, the same
//! per-element sums as the scalar kernel.
use core::arch::wasm32::*;

use crate::kernels::dense::{Strided, BLOCK};

pub(crate) fn matmul(x: Strided<'_>, b: &[f32], cols: usize, out: &mut [f32]) {
    let inner = b.len() / cols;
    for (r, row) in out.chunks_exact_mut(cols).enumerate() {
        let xr = &x.data[r * x.row_stride..];
        for (c0, o) in (0..cols).step_by(BLOCK).zip(row.chunks_mut(BLOCK)) {
            // Whole blocks with a constant width, so the accumulators stay in registers.
            if o.len() == BLOCK && inner > 0 {
                block::<{ BLOCK / 4 }>(xr, x.col_stride, &b[c0..], cols, inner, o);
            } else {
                narrow(xr, x.col_stride, &b[c0..], cols, inner, o);
            }
        }
    }
}

/// `o[c] = Σ_j x[j * cs] · b[j * cols + c]` for `o` of `4 * V` columns.
#[inline(always)]
fn block<const V: usize>(
    x: &[f32],
    cs: usize,
    b: &[f32],
    cols: usize,
    inner: usize,
    o: &mut [f32],
) {
    assert!(
        o.len() == 4 * V
            && inner > 0
            && x.len() > (inner - 1) * cs
            && b.len() >= (inner - 1) * cols + 4 * V
    );
    let mut acc = [f32x4_splat(0.0); V];
    // SAFETY: the bounds above.
    unsafe {
        for j in 0..inner {
            let a = f32x4_splat(*x.get_unchecked(j * cs));
            let bj = b.as_ptr().add(j * cols);
            for (i, acc) in acc.iter_mut().enumerate() {
                *acc = f32x4_add(*acc, f32x4_mul(a, v128_load(bj.add(4 * i) as *const v128)));
            }
        }
        for (i, acc) in acc.iter().enumerate() {
            v128_store(o.as_mut_ptr().add(4 * i) as *mut v128, *acc);
        }
    }
}

/// The last, narrower block of a row (scalar: same sums).
fn narrow(x: &[f32], cs: usize, b: &[f32], cols: usize, inner: usize, o: &mut [f32]) {
    o.fill(0.0);
    for j in 0..inner {
        let a = x[j * cs];
        for (s, &v) in o.iter_mut().zip(&b[j * cols..]) {
            *s += a * v;
        }
    }
}
