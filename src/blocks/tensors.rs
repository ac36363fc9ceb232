//! Typed access to container tensors with the shape the forward pass relies on re-checked, so
//! a hand-built container cannot make a model index out of bounds.
use alloc::vec::Vec;

use crate::container::{Codebooks, DType, TensorView};
use crate::kernels::{dot, CqMatrix};
use crate::{Error, Result};

/// The values of an FP16/FP32 tensor of exactly `len` elements.
pub(crate) fn floats(view: &TensorView<'_>, len: usize) -> Result<Vec<f32>> {
    if !matches!(view.dtype, DType::F16 | DType::F32) {
        return Err(Error::BadTensor {
            index: view.index,
            field: "dtype",
            reason: "expected a float tensor",
        });
    }
    if view.numel() != len {
        return Err(Error::BadTensor {
            index: view.index,
            field: "shape",
            reason: "element count differs from the geometry",
        });
    }
    Ok(view.to_f32_vec())
}

/// `1 + scale` of a zero-centred RMS norm (`ZCRMSNorm`): the factor upstream multiplies by.
pub(crate) fn gain(view: &TensorView<'_>, len: usize) -> Result<Vec<f32>> {
    Ok(floats(view, len)?.into_iter().map(|s| 1.0 + s).collect())
}

/// A CQ matrix of exactly `rows x cols`.
pub(crate) fn cq<'a>(
    view: &TensorView<'a>,
    cbs: &Codebooks,
    rows: usize,
    cols: usize,
) -> Result<CqMatrix<'a>> {
    let m = CqMatrix::from_view(view, cbs)?;
    if m.rows() != rows || m.cols() != cols {
        return Err(Error::BadTensor {
            index: view.index,
            field: "shape",
            reason: "matrix shape differs from the geometry",
        });
    }
    Ok(m)
}

/// A probe-head matrix: CQ (Needle 3's current layout) or FP16 widened once (Needle 2, and
/// Needle 3's older layout).
pub(crate) enum HeadMatrix<'a> {
    Cq(CqMatrix<'a>),
    Dense { cols: usize, w: Vec<f32> },
}

impl<'a> HeadMatrix<'a> {
    pub(crate) fn new(
        view: &TensorView<'a>,
        cbs: &Codebooks,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        if view.dtype == DType::Cq {
            Ok(Self::Cq(cq(view, cbs, rows, cols)?))
        } else {
            Ok(Self::Dense { cols, w: floats(view, rows * cols)? })
        }
    }

    /// Rows `start..start + count` as a matrix of their own.
    pub(crate) fn block(&self, start: usize, count: usize) -> Result<Self> {
        match self {
            Self::Cq(m) => Ok(Self::Cq(m.row_block(start, count)?)),
            Self::Dense { cols, w } => {
                Ok(Self::Dense { cols: *cols, w: w[start * cols..(start + count) * cols].to_vec() })
            }
        }
    }

    /// Floats a rotated input needs (0 for dense matrices).
    pub(crate) fn rotation_len(&self) -> usize {
        match self {
            Self::Cq(m) => m.cols_padded(),
            Self::Dense { .. } => 0,
        }
    }

    /// `out = W · x`; `rot` holds at least [`Self::rotation_len`] floats.
    pub(crate) fn matvec(&self, x: &[f32], rot: &mut [f32], out: &mut [f32]) {
        match self {
            Self::Cq(m) => m.matvec(x, rot, out),
            Self::Dense { cols, w } => {
                for (o, row) in out.iter_mut().zip(w.chunks_exact(*cols)) {
                    *o = dot(row, x);
                }
            }
        }
    }
}
