//! Zero-copy views of directory entries.
use alloc::vec::Vec;

use crate::kernels::f16;

/// Element encoding of a directory record (`dtype` byte: 1 FP16, 2 FP32, 3 CQ, 4 RAW).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F16,
    F32,
    /// Cactus-Quants codes plus FP16 group norms; `bits` gives the width (5 = ternary).
    Cq,
    /// Opaque bytes (the tokenizer attachment).
    Raw,
}

impl DType {
    pub(crate) fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::F16),
            2 => Some(Self::F32),
            3 => Some(Self::Cq),
            4 => Some(Self::Raw),
            _ => None,
        }
    }

    /// The record's `dtype` byte.
    pub fn code(self) -> u8 {
        match self {
            Self::F16 => 1,
            Self::F32 => 2,
            Self::Cq => 3,
            Self::Raw => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::F16 => "FP16",
            Self::F32 => "FP32",
            Self::Cq => "CQ",
            Self::Raw => "RAW",
        }
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, Self::F16 | Self::F32)
    }
}

/// One tensor: its directory record and exactly its bytes, borrowed from the input.
///
/// Every view handed out by the container has been checked: `data` lies inside the input and
/// overlaps no other tensor, its length is what dtype/shape/group/bits imply, and the shape is
/// what the header geometry predicts for its position in the canon.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorView<'a> {
    /// Position in the directory.
    pub index: u32,
    pub dtype: DType,
    /// Dimensions; entries past `ndim` are 0.
    pub shape: [u32; 4],
    pub ndim: u8,
    pub data: &'a [u8],
    /// CQ group size (0 for other dtypes).
    pub group: u32,
    /// CQ record width: 1..4 bits, 5 = ternary (0 for other dtypes).
    pub bits: u32,
    /// Byte offset of `data` in the input.
    pub offset: u64,
}

impl<'a> TensorView<'a> {
    pub fn dims(&self) -> &[u32] {
        &self.shape[..usize::from(self.ndim)]
    }

    /// Number of logical elements (1 for a scalar). Exact for every view the container hands
    /// out: the directory refuses tensors whose element count does not fit `usize`.
    pub fn numel(&self) -> usize {
        self.dims().iter().fold(1usize, |n, &d| n.saturating_mul(d as usize))
    }

    /// Element values of an FP16 or FP32 tensor, widened to f32 (empty for CQ and RAW: the canon
    /// only places float tensors where float values are read).
    pub fn float_values(&self) -> FloatValues<'a> {
        let width = match self.dtype {
            DType::F16 => 2,
            DType::F32 => 4,
            DType::Cq | DType::Raw => 0,
        };
        FloatValues { data: if width == 0 { &[] } else { self.data }, width: width.max(1) }
    }

    /// [`Self::float_values`] collected.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        self.float_values().collect()
    }
}

/// Iterator over the values of a float tensor (see [`TensorView::float_values`]).
#[derive(Clone, Debug)]
pub struct FloatValues<'a> {
    data: &'a [u8],
    width: usize,
}

impl Iterator for FloatValues<'_> {
    type Item = f32;

    fn next(&mut self) -> Option<f32> {
        let (head, rest) = match self.data {
            [a, b, rest @ ..] if self.width == 2 => {
                (f16::to_f32(u16::from_le_bytes([*a, *b])), rest)
            }
            [a, b, c, d, rest @ ..] if self.width == 4 => {
                (f32::from_le_bytes([*a, *b, *c, *d]), rest)
            }
            _ => return None,
        };
        self.data = rest;
        Some(head)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.data.len() / self.width;
        (n, Some(n))
    }
}

impl ExactSizeIterator for FloatValues<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(dtype: DType, ndim: u8, shape: [u32; 4], data: &[u8]) -> TensorView<'_> {
        TensorView { index: 0, dtype, shape, ndim, data, group: 0, bits: 0, offset: 0 }
    }

    #[test]
    fn fp16_values_widen_exactly() {
        let data = [0x00, 0x3c, 0x00, 0xc0, 0x00, 0x42];
        assert_eq!(view(DType::F16, 1, [3, 0, 0, 0], &data).to_f32_vec(), [1.0, -2.0, 3.0]);
    }

    #[test]
    fn fp32_values_are_read_little_endian() {
        let mut data = Vec::new();
        for v in [0.5f32, -7.25] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let v = view(DType::F32, 1, [2, 0, 0, 0], &data);
        assert_eq!(v.float_values().len(), 2);
        assert_eq!(v.to_f32_vec(), [0.5, -7.25]);
    }

    #[test]
    fn non_float_tensors_yield_no_float_values() {
        assert!(view(DType::Raw, 0, [0; 4], &[1, 2, 3, 4]).to_f32_vec().is_empty());
        assert!(view(DType::Cq, 2, [1, 8, 0, 0], &[0; 8]).to_f32_vec().is_empty());
    }

    #[test]
    fn dims_and_numel_follow_ndim() {
        let v = view(DType::F16, 3, [2, 3, 4, 9], &[]);
        assert_eq!(v.dims(), &[2, 3, 4]);
        assert_eq!(v.numel(), 24);
        assert_eq!(view(DType::F16, 0, [0; 4], &[]).numel(), 1);
    }
}
