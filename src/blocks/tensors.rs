//! Typed access to container tensors with the shape the forward pass relies on re-checked, so
//! a hand-built container cannot make a model index out of bounds.
use alloc::vec::Vec;

use crate::container::{Codebooks, DType, TensorView};
use crate::kernels::cq::Refusal;
use crate::kernels::{dot, CqMatrix, CqWidth};
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
    let m = cq_matrix(view, cbs)?;
    if m.rows() != rows || m.cols() != cols {
        return Err(Error::BadTensor {
            index: view.index,
            field: "shape",
            reason: "matrix shape differs from the geometry",
        });
    }
    Ok(m)
}

/// A CQ directory entry (`data` = packed codes then FP16 norms) as a kernel matrix, with the
/// header codebook its width reads; a refusal names the tensor.
fn cq_matrix<'a>(view: &TensorView<'a>, cbs: &Codebooks) -> Result<CqMatrix<'a>> {
    let refuse = |(field, reason): Refusal| Error::BadTensor { index: view.index, field, reason };
    if view.dtype != DType::Cq {
        return Err(refuse(("dtype", "not a CQ tensor")));
    }
    if view.ndim != 2 {
        return Err(refuse(("shape", "a CQ tensor must be two-dimensional")));
    }
    let width = CqWidth::from_record_bits(view.bits)
        .ok_or(("bits", "CQ width must be 1, 2, 3, 4 or 5"))
        .map_err(refuse)?;
    let levels: &[f32] = match width {
        CqWidth::B2 => &cbs.cb2,
        CqWidth::B3 => &cbs.cb3,
        CqWidth::B4 => &cbs.cb4,
        CqWidth::B1 | CqWidth::Ternary => &[],
    };
    let (rows, cols, group) = (view.shape[0] as usize, view.shape[1] as usize, view.group as usize);
    CqMatrix::from_blob(rows, cols, group, width, view.data, levels).map_err(refuse)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::{pseudo_random, RandomCq};

    const WIDTHS: [CqWidth; 5] =
        [CqWidth::B1, CqWidth::B2, CqWidth::B3, CqWidth::B4, CqWidth::Ternary];

    fn view<'a>(m: &RandomCq, rows: usize, cols: usize, blob: &'a [u8]) -> TensorView<'a> {
        let matrix = m.matrix();
        TensorView {
            index: 9,
            dtype: DType::Cq,
            shape: [rows as u32, cols as u32, 0, 0],
            ndim: 2,
            data: blob,
            group: matrix.group() as u32,
            bits: matrix.width().record_bits(),
            offset: 0,
        }
    }

    fn codebooks_with(levels: &[f32]) -> Codebooks {
        let mut cbs = Codebooks { cb2: [0.0; 4], cb3: [0.0; 8], cb4: [0.0; 16] };
        match levels.len() {
            4 => cbs.cb2.copy_from_slice(levels),
            8 => cbs.cb3.copy_from_slice(levels),
            16 => cbs.cb4.copy_from_slice(levels),
            _ => {}
        }
        cbs
    }

    #[test]
    fn a_cq_view_splits_its_blob_and_reads_the_header_codebook_of_its_width() {
        for width in WIDTHS {
            let m = RandomCq::new(3, 70, 32, width, 8);
            let blob: Vec<u8> = m.packed.iter().chain(&m.norms).copied().collect();
            let got =
                cq(&view(&m, 3, 70, &blob), &codebooks_with(&m.levels), 3, 70).expect("valid view");
            let (x, mut scratch, mut a, mut b) =
                (pseudo_random(70, 1), vec![0.0; 96], vec![0.0; 3], vec![0.0; 3]);
            got.matvec(&x, &mut scratch, &mut a);
            m.matrix().matvec(&x, &mut scratch, &mut b);
            assert_eq!(a, b, "{width:?}");
        }
    }

    #[test]
    fn a_bad_cq_view_is_refused_with_the_tensor_index_and_field() {
        let m = RandomCq::new(3, 70, 32, CqWidth::B4, 8);
        let blob: Vec<u8> = m.packed.iter().chain(&m.norms).copied().collect();
        let cbs = codebooks_with(&m.levels);
        let field = |v: &TensorView<'_>, rows, cols| match cq(v, &cbs, rows, cols) {
            Err(Error::BadTensor { index: 9, field, .. }) => field,
            other => panic!("expected a refusal of tensor 9, got {other:?}"),
        };
        let mut v = view(&m, 3, 70, &blob[..blob.len() - 1]);
        assert_eq!(field(&v, 3, 70), "nbytes");
        v.data = &blob;
        assert_eq!(field(&v, 3, 71), "shape");
        v.dtype = DType::F16;
        assert_eq!(field(&v, 3, 70), "dtype");
        v.dtype = DType::Cq;
        v.bits = 6;
        assert_eq!(field(&v, 3, 70), "bits");
        v.bits = 4;
        v.ndim = 3;
        assert_eq!(field(&v, 3, 70), "shape");
    }
}
