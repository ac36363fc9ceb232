//! Small dense f32 products, `out = X · B`, for the MLP's Kronecker factors (32 x 32 at the
//! shipped geometry): `X` is read through strides, so `Aᵀ · T` needs no transposed copy.
//!
//! Every output element sums `x[r][j] * b[j][c]` over `j` in order, from zero — the sequence a
//! loop of `axpy`s over a zeroed output performs — so blocking columns into registers (the
//! SIMD128 twin, and the scalar version's fixed-width accumulator array, which the compiler
//! vectorises) changes no bits.

// With simd128 the dispatcher calls the twin; the scalar version stays as the reference the
// twin test compares against.
#![cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

/// Columns accumulated at once.
pub(crate) const BLOCK: usize = 32;

/// The left operand of [`matmul`]: element `(r, j)` is `data[r * row_stride + j * col_stride]`.
#[derive(Clone, Copy)]
pub struct Strided<'a> {
    pub data: &'a [f32],
    pub row_stride: usize,
    pub col_stride: usize,
}

/// `out[r * cols + c] = Σ_j x(r, j) · b[j * cols + c]` for `r < out.len() / cols`,
/// `j < b.len() / cols`.
pub fn matmul(x: Strided<'_>, b: &[f32], cols: usize, out: &mut [f32]) {
    assert!(
        cols > 0 && b.len().is_multiple_of(cols) && out.len().is_multiple_of(cols),
        "dense::matmul: b and out must be whole rows of cols"
    );
    let (rows, inner) = (out.len() / cols, b.len() / cols);
    if rows > 0 && inner > 0 {
        let last = (rows - 1) * x.row_stride + (inner - 1) * x.col_stride;
        assert!(last < x.data.len(), "dense::matmul: x too short for its strides");
    }
    dispatch!(simd128::matmul, matmul_scalar, x, b, cols, out)
}

pub(crate) fn matmul_scalar(x: Strided<'_>, b: &[f32], cols: usize, out: &mut [f32]) {
    let inner = b.len() / cols;
    for (r, row) in out.chunks_exact_mut(cols).enumerate() {
        for (c0, o) in (0..cols).step_by(BLOCK).zip(row.chunks_mut(BLOCK)) {
            let mut acc = [0.0f32; BLOCK];
            let a = |j: usize| x.data[r * x.row_stride + j * x.col_stride];
            if o.len() == BLOCK {
                // A constant width, so the compiler keeps the sums in vector registers.
                for j in 0..inner {
                    let (a, bj) = (a(j), &b[j * cols + c0..][..BLOCK]);
                    for c in 0..BLOCK {
                        acc[c] += a * bj[c];
                    }
                }
            } else {
                for j in 0..inner {
                    let a = a(j);
                    for (s, &v) in acc.iter_mut().zip(&b[j * cols + c0..][..o.len()]) {
                        *s += a * v;
                    }
                }
            }
            o.copy_from_slice(&acc[..o.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::axpy;
    use crate::kernels::test_util::pseudo_random;

    /// The reference: a zeroed output and one axpy per term, in order.
    fn by_axpy(x: Strided<'_>, b: &[f32], cols: usize, out: &mut [f32]) {
        out.fill(0.0);
        let inner = b.len() / cols;
        for (r, row) in out.chunks_exact_mut(cols).enumerate() {
            for j in 0..inner {
                axpy(
                    x.data[r * x.row_stride + j * x.col_stride],
                    &b[j * cols..(j + 1) * cols],
                    row,
                );
            }
        }
    }

    #[test]
    fn equals_one_axpy_per_term_for_both_layouts() {
        for (rows, inner, cols) in [(32, 32, 32), (3, 5, 7), (2, 4, 37), (1, 1, 64), (4, 3, 70)] {
            let b = pseudo_random(inner * cols, 2);
            let xd = pseudo_random(rows * inner, 3);
            for x in [
                Strided { data: &xd, row_stride: inner, col_stride: 1 },
                Strided { data: &xd, row_stride: 1, col_stride: rows },
            ] {
                let (mut got, mut want) = (vec![f32::NAN; rows * cols], vec![0.0; rows * cols]);
                matmul(x, &b, cols, &mut got);
                by_axpy(x, &b, cols, &mut want);
                assert_eq!(got, want, "{rows}x{inner}x{cols}");
                let mut scalar = vec![f32::NAN; rows * cols];
                matmul_scalar(x, &b, cols, &mut scalar);
                assert_eq!(scalar, want, "scalar {rows}x{inner}x{cols}");
            }
        }
    }
}
