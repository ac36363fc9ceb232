//! wasm32 SIMD128 twin of [`super::dense`]: 32 output columns in 8 f32x4 accumulators, the same
//! per-element sums as the scalar kernel.
use core::arch::wasm32::*;

use super::dense::{Strided, BLOCK};

pub(crate) fn matmul(x: Strided<'_>, b: &[f32], cols: usize, out: &mut [f32]) {
    let inner = b.len() / cols;
    for (r, row) in out.chunks_exact_mut(cols).enumerate() {
        for (c0, o) in (0..cols).step_by(BLOCK).zip(row.chunks_mut(BLOCK)) {
            let vecs = o.len() / 4;
            let mut acc = [f32x4_splat(0.0); BLOCK / 4];
            let mut tail = [0.0f32; 4];
            for j in 0..inner {
                let a = x.data[r * x.row_stride + j * x.col_stride];
                let bj = &b[j * cols + c0..][..o.len()];
                let av = f32x4_splat(a);
                for (i, acc) in acc[..vecs].iter_mut().enumerate() {
                    // SAFETY: 4 floats at 4 * i < o.len() = bj.len().
                    *acc = f32x4_add(*acc, f32x4_mul(av, unsafe { v128_load(bj.as_ptr().add(4 * i) as *const v128) }));
                }
                for (s, &v) in tail.iter_mut().zip(&bj[4 * vecs..]) {
                    *s += a * v;
                }
            }
            for (i, acc) in acc[..vecs].iter().enumerate() {
                // SAFETY: 4 floats at 4 * i < o.len().
                unsafe { v128_store(o.as_mut_ptr().add(4 * i) as *mut v128, *acc) };
            }
            let rest = o.len() - 4 * vecs;
            o[4 * vecs..].copy_from_slice(&tail[..rest]);
        }
    }
}
