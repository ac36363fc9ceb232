//! The nameless tensor directory: 44-byte records
//! `u8 dtype, u8 ndim, u16 pad, u32 shape[4], u64 offset, u64 nbytes, u32 group, u32 bits`.
//!
//! This layer checks what a record says about itself (known dtype and width, byte size implied
//! by shape, extent inside the input, no two tensors sharing bytes). Whether the shape is the
//! one the geometry predicts is the canon walk's job.
use alloc::vec::Vec;

use super::bytes::{self, Le};
use super::tensor::{DType, TensorView};
use crate::{Error, Result};

pub const RECORD_LEN: u64 = 44;

/// Record `bits` value that denotes ternary (stored as 2-bit crumbs).
pub const TERNARY_BITS: u32 = 5;

const SHAPE_FIELDS: [&str; 4] = ["shape[0]", "shape[1]", "shape[2]", "shape[3]"];

fn bad(index: u32, field: &'static str, reason: &'static str) -> Error {
    Error::BadTensor { index, field, reason }
}

/// Reads `count` records starting at `start`; `widths` are the CQ record widths the generation
/// knows. Tensor data may only live after the directory.
pub(crate) fn read<'a>(
    input: &'a [u8],
    start: u64,
    count: u32,
    widths: &[u32],
) -> Result<Vec<TensorView<'a>>> {
    let dir = Le::window(input, start, u64::from(count) * RECORD_LEN, "directory")?;
    let data_start = start + u64::from(count) * RECORD_LEN;
    // `count` is bounded by the input length now (every record took 44 real bytes).
    let mut views = Vec::with_capacity(count as usize);
    let mut model_group = None;
    for index in 0..count {
        let at = index as usize * RECORD_LEN as usize;
        let view = record(input, &dir, at, index, data_start, widths)?;
        if view.dtype == DType::Cq {
            // The header codebooks are pre-scaled by 1/sqrt(group) for one group size.
            if *model_group.get_or_insert(view.group) != view.group {
                return Err(bad(
                    index,
                    "group",
                    "differs from the other CQ tensors (the codebooks fit one group size)",
                ));
            }
        }
        views.push(view);
    }
    check_disjoint(&views)?;
    check_no_trailing_bytes(input.len() as u64, data_start, &views)?;
    Ok(views)
}

/// The input ends where its last tensor ends. Upstream's exporter writes nothing after it, and
/// bytes no record describes are bytes no check reads: a file carrying them (1 MiB of zeros
/// appended to the default model loaded silently) is not a container as exported, so it is
/// refused rather than loaded with a warning the core has no channel for.
fn check_no_trailing_bytes(len: u64, data_start: u64, views: &[TensorView<'_>]) -> Result<()> {
    let end = views
        .iter()
        .map(|v| v.offset + v.data.len() as u64)
        .max()
        .unwrap_or(data_start)
        .max(data_start);
    if len > end {
        return Err(bad(
            views.len() as u32,
            "offset",
            "bytes after the last tensor belong to no tensor",
        ));
    }
    Ok(())
}

fn record<'a>(
    input: &'a [u8],
    dir: &Le<'_>,
    at: usize,
    index: u32,
    data_start: u64,
    widths: &[u32],
) -> Result<TensorView<'a>> {
    let dtype = DType::from_code(dir.u8(at)?).ok_or(bad(index, "dtype", "unknown dtype code"))?;
    let ndim = dir.u8(at + 1)?;
    if ndim > 4 {
        return Err(bad(index, "ndim", "more than four dimensions"));
    }
    let mut shape = [0u32; 4];
    for (i, s) in shape.iter_mut().enumerate() {
        *s = dir.u32(at + 4 + 4 * i)?;
    }
    let dims = &shape[..usize::from(ndim)];
    if let Some(i) = dims.iter().position(|&d| d == 0) {
        return Err(bad(index, SHAPE_FIELDS[i], "zero-length dimension"));
    }
    let offset = dir.u64(at + 20)?;
    let nbytes = dir.u64(at + 28)?;
    let group = dir.u32(at + 36)?;
    let bits = dir.u32(at + 40)?;

    let numel = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::from(d)));
    let numel = numel.filter(|&n| usize::try_from(n).is_ok()).ok_or(bad(
        index,
        "shape",
        "element count too large",
    ))?;
    let expected = match dtype {
        DType::F16 => numel.checked_mul(2),
        DType::F32 => numel.checked_mul(4),
        DType::Cq => Some(cq_nbytes(index, dims, group, bits, widths)?),
        DType::Raw if ndim != 0 => return Err(bad(index, "ndim", "a RAW attachment has no shape")),
        DType::Raw => Some(nbytes),
    };
    if expected != Some(nbytes) {
        return Err(bad(index, "nbytes", "does not match the dtype and shape"));
    }

    if offset < data_start {
        return Err(bad(index, "offset", "points into the header or directory"));
    }
    if offset > input.len() as u64 {
        return Err(bad(index, "offset", "starts past the end of the input"));
    }
    let end =
        offset.checked_add(nbytes).ok_or(bad(index, "nbytes", "runs past the end of the input"))?;
    let data = bytes::slice(input, offset, end).ok_or(bad(
        index,
        "nbytes",
        "runs past the end of the input",
    ))?;
    let (group, bits) = if dtype == DType::Cq { (group, bits) } else { (0, 0) };
    Ok(TensorView { index, dtype, shape, ndim, data, group, bits, offset })
}

/// Bytes of a CQ blob: per row the packed codes of the group-padded width, then one FP16 norm
/// per (row, group).
fn cq_nbytes(index: u32, dims: &[u32], group: u32, bits: u32, widths: &[u32]) -> Result<u64> {
    let &[rows, cols] = dims else {
        return Err(bad(index, "ndim", "a CQ tensor must be two-dimensional"));
    };
    if !widths.contains(&bits) {
        return Err(bad(index, "bits", "unsupported CQ width"));
    }
    if !group.is_power_of_two() {
        return Err(bad(
            index,
            "group",
            "must be a power of two (the Walsh-Hadamard rotation needs it)",
        ));
    }
    let code_bits = if bits == TERNARY_BITS { 2 } else { u64::from(bits) };
    let (rows, group) = (u64::from(rows), u64::from(group));
    let groups = u64::from(cols).div_ceil(group);
    let row_bits = groups * group * code_bits;
    if row_bits % 8 != 0 {
        return Err(bad(index, "group", "packed rows are not a whole number of bytes"));
    }
    let too_large = bad(index, "shape", "CQ blob size overflows");
    let packed = rows.checked_mul(row_bits / 8).ok_or(too_large.clone())?;
    let norms = rows.checked_mul(groups * 2).ok_or(too_large.clone())?;
    packed.checked_add(norms).ok_or(too_large)
}

/// No two tensors may share a byte (a forged directory could alias one blob as two weights).
fn check_disjoint(views: &[TensorView<'_>]) -> Result<()> {
    let mut spans: Vec<(u64, u64, u32)> = views
        .iter()
        .filter(|v| !v.data.is_empty())
        .map(|v| (v.offset, v.offset + v.data.len() as u64, v.index))
        .collect();
    crate::sort::sort(&mut spans);
    for pair in spans.windows(2) {
        let ((_, prev_end, _), (start, _, index)) = (pair[0], pair[1]);
        if start < prev_end {
            return Err(bad(index, "offset", "overlaps another tensor's bytes"));
        }
    }
    Ok(())
}
