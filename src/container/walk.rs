//! A cursor over the directory in canon order: each step names the next record and checks its
//! dtype and shape against what the header geometry predicts.
use alloc::vec::Vec;

use super::header::bad as bad_header;
use super::names::{NamedTensor, TensorName};
use super::tensor::{DType, TensorView};
use crate::{Error, Result};

/// The dtype family a canon position allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// FP16 or FP32 (read through `TensorView::float_values`).
    Float,
    Cq,
}

/// One expected dimension and, for the error, what it must equal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dim {
    pub value: u64,
    pub what: &'static str,
}

pub(crate) const fn dim(value: u64, what: &'static str) -> Dim {
    Dim { value, what }
}

/// Product of header fields, for a derived dimension: factors are u32, but three of them can
/// overflow u64 in a forged header.
pub(crate) fn product(factors: &[u32], field: &'static str) -> Result<u64> {
    factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(u64::from(f))).ok_or(bad_header(
        field,
        u64::MAX,
        "derived tensor size overflows",
    ))
}

const SHAPE_FIELDS: [&str; 4] = ["shape[0]", "shape[1]", "shape[2]", "shape[3]"];
const NDIM_REASONS: [&str; 5] = [
    "expected a scalar",
    "expected 1 dimension",
    "expected 2 dimensions",
    "expected 3 dimensions",
    "expected 4 dimensions",
];

fn bad(view: &TensorView<'_>, field: &'static str, reason: &'static str) -> Error {
    Error::BadTensor { index: view.index, field, reason }
}

/// Checks one record against an expectation.
pub(crate) fn conform(view: &TensorView<'_>, kind: Kind, dims: &[Dim]) -> Result<()> {
    let kind_ok = match kind {
        Kind::Float => view.dtype.is_float(),
        Kind::Cq => view.dtype == DType::Cq,
    };
    if !kind_ok {
        let reason = match kind {
            Kind::Float => "expected FP16 or FP32 here",
            Kind::Cq => "expected a CQ matrix here",
        };
        return Err(bad(view, "dtype", reason));
    }
    if usize::from(view.ndim) != dims.len() {
        return Err(bad(view, "ndim", NDIM_REASONS[dims.len().min(4)]));
    }
    for (i, d) in dims.iter().enumerate() {
        if u64::from(view.shape[i]) != d.value {
            return Err(bad(view, SHAPE_FIELDS[i], d.what));
        }
    }
    Ok(())
}

pub(crate) struct Walk<'a> {
    views: Vec<TensorView<'a>>,
    pos: usize,
    named: Vec<NamedTensor<'a>>,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(views: Vec<TensorView<'a>>) -> Self {
        let named = Vec::with_capacity(views.len());
        Self { views, pos: 0, named }
    }

    /// Records not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.views.len() - self.pos
    }

    /// The next record, named, without checks.
    pub(crate) fn take(&mut self, name: TensorName) -> Result<TensorView<'a>> {
        let view = *self.views.get(self.pos).ok_or(bad_header(
            "num_tensors",
            self.views.len() as u64,
            "fewer records than the geometry needs",
        ))?;
        self.pos += 1;
        self.named.push(NamedTensor { name, view });
        Ok(view)
    }

    /// The next record, named and checked.
    pub(crate) fn expect(
        &mut self,
        name: TensorName,
        kind: Kind,
        dims: &[Dim],
    ) -> Result<TensorView<'a>> {
        let view = self.take(name)?;
        conform(&view, kind, dims)?;
        Ok(view)
    }

    /// The final record: the RAW tokenizer attachment.
    pub(crate) fn tokenizer(&mut self) -> Result<&'a [u8]> {
        let view = self.take(TensorName::model("tokenizer"))?;
        if view.dtype != DType::Raw {
            return Err(bad(&view, "dtype", "the last record must be the RAW tokenizer"));
        }
        if self.remaining() != 0 {
            return Err(bad_header(
                "num_tensors",
                self.views.len() as u64,
                "records left after the tokenizer",
            ));
        }
        Ok(view.data)
    }

    pub(crate) fn finish(self) -> Vec<NamedTensor<'a>> {
        self.named
    }
}
