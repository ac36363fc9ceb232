//! Cactus-Quants (CQ) matrices, used in place: never expanded to dense weights.
//!
//! A CQ tensor stores a logical `[rows, cols]` matrix with `cols` padded up to a multiple of the
//! group size `G`. Per row, one LSB-first bitstream of codes (code `k` at bits `[k*b, (k+1)*b)`),
//! then, after all rows, one FP16 L2 norm per (row, group). Upstream (`export._cq_unpack`)
//! reconstructs each group as `w_g = (cb[code] * norm) @ H` with `H` the orthonormal Sylvester
//! Hadamard of size `G`. Because `H` is symmetric and orthonormal,
//!
//! ```text
//! dot(w_g, x_g) = (cb[code] * norm) · (H x_g)
//! ```
//!
//! so each input vector is rotated once per matrix ([`CqMatrix::rotate_input`], one FWHT per group)
//! and the product becomes a codebook-lookup dot product per group, scaled by the group norm
//! ([`CqMatrix::matvec_rotated`]).
//!
//! Accumulation order (shared by the scalar kernel here, the SIMD128 twin and the AVX2 variant,
//! all bit-identical): within a group, lane `i` of 4 accumulates `w[k] * x[k]` for codes
//! `k ≡ i (mod 4)` in code order, from zero; each (row, input) keeps 4 running sums
//! `r[i] += s[i] * norm` over the groups in order and finishes as `(r0 + r2) + (r1 + r3)`.
//! One vector accumulator per (row, input) is what lets the SIMD kernels block several rows and
//! several inputs in registers (each decoded weight vector and each loaded input vector serves
//! several products) without changing any one product's sequence: [`CqMatrix::matmul_rotated`]
//! performs exactly that sequence per (input, row), so batched prefill equals stepping bit for
//! bit, whatever the blocking.

// With simd128 the dispatchers call the twins; the scalar versions stay as the reference the
// twin tests compare against.
#![cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx2;
#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx512;
#[cfg(test)]
pub(super) mod bench;
mod rows;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;
#[cfg(test)]
mod tests;

use super::{f16, hadamard, parallel, vector};
use crate::{Error, Result};

/// Code width of a CQ tensor, from the directory record's `bits` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqWidth {
    /// 1 bit per code; analytic codebook `±sqrt(2/pi) / sqrt(G)`.
    B1,
    /// 2 bits per code; codebook `cb2` from the container header.
    B2,
    /// 3 bits per code; codebook `cb3` from the container header.
    B3,
    /// 4 bits per code; codebook `cb4` from the container header.
    B4,
    /// Record bits 5: 2-bit crumbs, codes 3, 0, 1 = levels `-c, 0, +c` over sqrt(G), `c = 1.2240064`.
    Ternary,
}

impl CqWidth {
    /// Width for a directory record's `bits` value (1, 2, 3, 4, or 5 for ternary).
    pub fn from_record_bits(bits: u32) -> Option<Self> {
        match bits {
            1 => Some(Self::B1),
            2 => Some(Self::B2),
            3 => Some(Self::B3),
            4 => Some(Self::B4),
            5 => Some(Self::Ternary),
            _ => None,
        }
    }

    /// The directory record's `bits` value for this width.
    pub fn record_bits(self) -> u32 {
        match self {
            Self::B1 => 1,
            Self::B2 => 2,
            Self::B3 => 3,
            Self::B4 => 4,
            Self::Ternary => 5,
        }
    }

    /// Bits each code occupies in the packed stream.
    pub fn code_bits(self) -> usize {
        match self {
            Self::B1 => 1,
            Self::B2 | Self::Ternary => 2,
            Self::B3 => 3,
            Self::B4 => 4,
        }
    }

    /// Number of codebook levels the container header supplies for this width (0 = analytic).
    pub fn header_levels(self) -> usize {
        match self {
            Self::B2 => 4,
            Self::B3 => 8,
            Self::B4 => 16,
            Self::B1 | Self::Ternary => 0,
        }
    }
}

/// Smallest supported group: the kernels decode 16 codes at a time.
pub const MIN_GROUP: usize = 16;
/// Largest supported group: bounds the stack buffers of the batched and dequantising paths.
pub const MAX_GROUP: usize = 1024;

/// Inputs per tile in [`CqMatrix::matmul_rotated`]: one group decode serves this many inputs.
pub(crate) const TILE: usize = 16;

/// Upstream's ternary centroid magnitude (before division by sqrt(G)).
const TERNARY_LEVEL: f64 = 1.224_006_4;

/// A validated, zero-copy view of one CQ matrix.
#[derive(Clone, Copy, Debug)]
pub struct CqMatrix<'a> {
    rows: usize,
    cols: usize,
    cols_padded: usize,
    group: usize,
    width: CqWidth,
    packed: &'a [u8],
    norms: &'a [u8],
    /// Value of each stored code (already divided by sqrt(G)); unused codes hold 0.
    table: [f32; 16],
}

/// Why a set of parts does not form a CQ matrix: (field, reason).
pub(crate) type Refusal = (&'static str, &'static str);

impl<'a> CqMatrix<'a> {
    /// Build from raw parts. `levels` are the header codebook entries for this width
    /// (`width.header_levels()` values, already divided by sqrt(G)); empty for 1-bit and ternary,
    /// whose codebooks are analytic.
    pub fn from_parts(
        rows: usize,
        cols: usize,
        group: usize,
        width: CqWidth,
        packed: &'a [u8],
        norms: &'a [u8],
        levels: &[f32],
    ) -> Result<Self> {
        Self::build(rows, cols, group, width, packed, norms, levels)
            .map_err(|(name, reason)| Error::InvalidArgument { name, reason })
    }

    /// Build from one blob holding the packed codes then the FP16 norms (a CQ tensor's bytes as
    /// stored), saying which part is wrong; callers name the tensor in their own error.
    pub(crate) fn from_blob(
        rows: usize,
        cols: usize,
        group: usize,
        width: CqWidth,
        blob: &'a [u8],
        levels: &[f32],
    ) -> core::result::Result<Self, Refusal> {
        let (_, row_bytes) = Self::geometry(cols, group, width)?;
        let packed_len = rows.checked_mul(row_bytes).ok_or(("shape", "matrix too large"))?;
        if blob.len() < packed_len {
            return Err(("nbytes", "blob is shorter than the packed codes"));
        }
        let (packed, norms) = blob.split_at(packed_len);
        Self::build(rows, cols, group, width, packed, norms, levels)
    }

    /// Padded width and packed bytes per row, or why the shape is unusable.
    fn geometry(
        cols: usize,
        group: usize,
        width: CqWidth,
    ) -> core::result::Result<(usize, usize), Refusal> {
        if !group.is_power_of_two() || !(MIN_GROUP..=MAX_GROUP).contains(&group) {
            return Err(("group", "CQ group must be a power of two from 16 to 1024"));
        }
        if cols == 0 {
            return Err(("shape", "a CQ matrix needs at least one column"));
        }
        let cols_padded =
            cols.div_ceil(group).checked_mul(group).ok_or(("shape", "matrix too large"))?;
        // cols_padded is a multiple of 16, so the row is a whole number of bytes at every width.
        let row_bytes =
            cols_padded.checked_mul(width.code_bits()).ok_or(("shape", "matrix too large"))? / 8;
        Ok((cols_padded, row_bytes))
    }

    fn build(
        rows: usize,
        cols: usize,
        group: usize,
        width: CqWidth,
        packed: &'a [u8],
        norms: &'a [u8],
        levels: &[f32],
    ) -> core::result::Result<Self, Refusal> {
        let (cols_padded, row_bytes) = Self::geometry(cols, group, width)?;
        if rows == 0 {
            return Err(("shape", "a CQ matrix needs at least one row"));
        }
        let too_large = ("shape", "matrix too large");
        if rows.checked_mul(row_bytes).ok_or(too_large)? != packed.len() {
            return Err(("nbytes", "packed code bytes do not match the shape"));
        }
        let norm_bytes = rows
            .checked_mul(cols_padded / group)
            .and_then(|n| n.checked_mul(2))
            .ok_or(too_large)?;
        if norms.len() != norm_bytes {
            return Err(("nbytes", "norm bytes do not match the shape"));
        }
        if levels.len() != width.header_levels() {
            return Err(("codebook", "codebook length does not match the CQ width"));
        }
        if width == CqWidth::Ternary && packed.iter().any(|&b| (b >> 1) & !b & 0x55 != 0) {
            return Err(("data", "ternary crumb code 2 is not a trit"));
        }
        Ok(Self {
            rows,
            cols,
            cols_padded,
            group,
            width,
            packed,
            norms,
            table: code_table(width, group, levels),
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// `cols` rounded up to a multiple of the group: the length of a rotated input.
    pub fn cols_padded(&self) -> usize {
        self.cols_padded
    }
    pub fn group(&self) -> usize {
        self.group
    }
    pub fn width(&self) -> CqWidth {
        self.width
    }
    pub(crate) fn groups_per_row(&self) -> usize {
        self.cols_padded / self.group
    }
    pub(crate) fn row_bytes(&self) -> usize {
        self.cols_padded * self.width.code_bits() / 8
    }
    pub(crate) fn packed(&self) -> &'a [u8] {
        self.packed
    }
    pub(crate) fn norms(&self) -> &'a [u8] {
        self.norms
    }
    pub(crate) fn table(&self) -> &[f32; 16] {
        &self.table
    }

    /// `out[..cols_padded]` = `x` zero-padded to `cols_padded`, each group replaced by `H · x_g`.
    /// One rotation serves every matrix with the same `cols` and group (e.g. q, k and v).
    pub fn rotate_input(&self, x: &[f32], out: &mut [f32]) {
        assert_eq!(x.len(), self.cols, "rotate_input: input length must equal cols");
        let out = &mut out[..self.cols_padded];
        out[..self.cols].copy_from_slice(x);
        out[self.cols..].fill(0.0);
        for g in out.chunks_exact_mut(self.group) {
            hadamard::fwht(g);
        }
    }

    /// `out[r] = W[r] · x` for one rotated input `xr` (from [`Self::rotate_input`]).
    pub fn matvec_rotated(&self, xr: &[f32], out: &mut [f32]) {
        assert!(
            xr.len() >= self.cols_padded,
            "matvec_rotated: rotated input shorter than cols_padded"
        );
        assert!(out.len() >= self.rows, "matvec_rotated: output shorter than rows");
        parallel::rows(self.rows, 1, self.cols_padded, out, |range, part| {
            self.rows_view(range).matvec_kernel(xr, part)
        });
    }

    /// One thread's `matvec_rotated`.
    fn matvec_kernel(&self, xr: &[f32], out: &mut [f32]) {
        dispatch!(x86: self.x86_kernel(xr, 1, out); simd128::matvec_rotated, matvec_rotated_scalar, self, xr, out)
    }

    /// `out[..rows] = W · x`; `scratch` holds at least `cols_padded` floats.
    pub fn matvec(&self, x: &[f32], scratch: &mut [f32], out: &mut [f32]) {
        self.rotate_input(x, scratch);
        self.matvec_rotated(&scratch[..self.cols_padded], out);
    }

    /// `n` products at once: input `j` is `xr[j*cols_padded..][..cols_padded]`, its result lands in
    /// `out[j*rows..][..rows]`. Bit-identical to `n` calls of [`Self::matvec_rotated`].
    pub fn matmul_rotated(&self, xr: &[f32], n: usize, out: &mut [f32]) {
        assert!(
            xr.len() >= n * self.cols_padded,
            "matmul_rotated: rotated inputs shorter than n * cols_padded"
        );
        assert!(out.len() >= n * self.rows, "matmul_rotated: output shorter than n * rows");
        parallel::rows(self.rows, n, n * self.cols_padded, out, |range, part| {
            self.rows_view(range).matmul_kernel(xr, n, part)
        });
    }

    /// [`Self::matmul_rotated`] of each matrix of `jobs` (all with the same `cols_padded`) on the
    /// same rotated inputs, its result into the output beside it: the same bits as one call per
    /// matrix, but split across threads as one run of rows (one hand-off for all of them).
    pub fn matmul_rotated_each(xr: &[f32], n: usize, jobs: &mut [(&CqMatrix<'_>, &mut [f32])]) {
        let Some(cp) = jobs.first().map(|(m, _)| m.cols_padded) else { return };
        assert!(
            jobs.iter().all(|(m, _)| m.cols_padded == cp),
            "matmul_rotated_each: matrices of different widths"
        );
        assert!(
            xr.len() >= n * cp,
            "matmul_rotated_each: rotated inputs shorter than n * cols_padded"
        );
        assert!(
            jobs.iter().all(|(m, out)| out.len() >= n * m.rows),
            "matmul_rotated_each: output shorter than n * rows"
        );
        parallel::rows_each(
            n,
            n * cp,
            jobs,
            |m| m.rows,
            |m, range, part| m.rows_view(range).matmul_kernel(xr, n, part),
        );
    }

    /// One thread's `matmul_rotated`.
    fn matmul_kernel(&self, xr: &[f32], n: usize, out: &mut [f32]) {
        dispatch!(x86: self.x86_kernel(xr, n, out); simd128::matmul_rotated, matmul_rotated_scalar, self, xr, n, out)
    }

    /// The x86-64 variants, by the CPU's features at run time: AVX-512 for one input (group 32
    /// or more), else AVX2; false when the CPU has neither.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    fn x86_kernel(&self, xr: &[f32], n: usize, out: &mut [f32]) -> bool {
        (n == 1 && avx512::matvec_rotated(self, xr, out)) || avx2::matmul_rotated(self, xr, n, out)
    }

    /// Rows `range` (within the matrix) as a matrix of their own: the same codes, norms and
    /// table, nothing re-validated (a run of a valid matrix's rows is valid).
    pub(crate) fn rows_view(&self, range: core::ops::Range<usize>) -> Self {
        debug_assert!(range.start < range.end && range.end <= self.rows);
        let (row_bytes, norm_bytes) = (self.row_bytes(), self.groups_per_row() * 2);
        Self {
            rows: range.len(),
            packed: &self.packed[range.start * row_bytes..range.end * row_bytes],
            norms: &self.norms[range.start * norm_bytes..range.end * norm_bytes],
            ..*self
        }
    }

    /// Row `r` of the dense matrix, `(cb[code] * norm) @ H` per group, first `cols` values, into
    /// `out[..cols]` (embedding lookups; not a hot path).
    pub fn dequant_row(&self, r: usize, out: &mut [f32]) {
        assert!(r < self.rows, "dequant_row: row out of range");
        let out = &mut out[..self.cols];
        let g = self.group;
        let group_bytes = g * self.width.code_bits() / 8;
        let packed = &self.packed[r * self.row_bytes()..][..self.row_bytes()];
        let norms = &self.norms[r * self.groups_per_row() * 2..];
        // One row is too little work to amortise a lookup table: read the codes one by one.
        let decoder = CodeByCode { bits: self.width.code_bits(), table: &self.table };
        let mut buf = [0.0f32; MAX_GROUP];
        let buf = &mut buf[..g];
        for (gi, dst) in out.chunks_mut(g).enumerate() {
            decoder.group(&packed[gi * group_bytes..][..group_bytes], buf);
            let norm = f16::at(norms, gi);
            for v in buf.iter_mut() {
                *v *= norm;
            }
            hadamard::fwht(buf);
            dst.copy_from_slice(&buf[..dst.len()]);
        }
    }
}

/// Value per stored code. Analytic levels are formed in double precision and rounded to f32,
/// as upstream's `_cq_codebook_np` does.
fn code_table(width: CqWidth, group: usize, levels: &[f32]) -> [f32; 16] {
    let root_g = libm::sqrt(group as f64);
    let mut table = [0.0f32; 16];
    match width {
        CqWidth::B1 => {
            let c = (libm::sqrt(2.0 / core::f64::consts::PI) / root_g) as f32;
            table[0] = -c;
            table[1] = c;
        }
        CqWidth::Ternary => {
            // Crumb code -> trit: 3 -> -c, 0 -> 0, 1 -> +c (code 2 is refused at construction).
            let c = (TERNARY_LEVEL / root_g) as f32;
            table[1] = c;
            table[3] = -c;
        }
        CqWidth::B2 | CqWidth::B3 | CqWidth::B4 => table[..levels.len()].copy_from_slice(levels),
    }
    table
}

/// Scalar group decoding by table lookup, like the SIMD twin: each packed byte (1, 2, 4 bits,
/// ternary) or each 12-bit run of four 3-bit codes indexes a table, built once per call, of the
/// weights it encodes, so decoding is one small copy per index.
trait GroupDecode {
    /// Weights of one group's codes (`src` = its `G * bits / 8` bytes) into `dst`.
    fn group(&self, src: &[u8], dst: &mut [f32]);
}

/// Each code read from the bitstream on its own (code `k` at bits `[k*b, (k+1)*b)`).
struct CodeByCode<'t> {
    bits: usize,
    table: &'t [f32; 16],
}

impl GroupDecode for CodeByCode<'_> {
    fn group(&self, src: &[u8], dst: &mut [f32]) {
        let mask = (1u16 << self.bits) - 1;
        for (k, v) in dst.iter_mut().enumerate() {
            let bit = k * self.bits;
            let pair = u16::from(src[bit / 8])
                | u16::from(src.get(bit / 8 + 1).copied().unwrap_or(0)) << 8;
            *v = self.table[usize::from((pair >> (bit % 8)) & mask)];
        }
    }
}

/// Byte-aligned widths: the `PER` weights each possible packed byte holds.
struct ByteTable<const PER: usize> {
    by_byte: [[f32; PER]; 256],
}

impl<const PER: usize> ByteTable<PER> {
    fn new(table: &[f32; 16]) -> Self {
        let bits = 8 / PER;
        let mask = (1 << bits) - 1;
        ByteTable {
            by_byte: core::array::from_fn(|b| {
                core::array::from_fn(|i| table[(b >> (bits * i)) & mask])
            }),
        }
    }
}

impl<const PER: usize> GroupDecode for ByteTable<PER> {
    #[inline(always)]
    fn group(&self, src: &[u8], dst: &mut [f32]) {
        for (d, &b) in dst.chunks_exact_mut(PER).zip(src) {
            d.copy_from_slice(&self.by_byte[usize::from(b)]);
        }
    }
}

/// 3-bit: the four weights of every 12-bit run (four codes; 3 bytes hold two runs).
struct RunTable3 {
    by_run: [[f32; 4]; 4096],
}

impl RunTable3 {
    fn new(table: &[f32; 16]) -> Self {
        RunTable3 {
            by_run: core::array::from_fn(|r| core::array::from_fn(|i| table[(r >> (3 * i)) & 7])),
        }
    }
}

impl GroupDecode for RunTable3 {
    #[inline(always)]
    fn group(&self, src: &[u8], dst: &mut [f32]) {
        for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(3)) {
            let word = usize::from(s[0]) | usize::from(s[1]) << 8 | usize::from(s[2]) << 16;
            d[..4].copy_from_slice(&self.by_run[word & 0xfff]);
            d[4..].copy_from_slice(&self.by_run[word >> 12]);
        }
    }
}

/// Scalar `matvec_rotated`: the batched kernel with one input.
pub(crate) fn matvec_rotated_scalar(m: &CqMatrix<'_>, xr: &[f32], out: &mut [f32]) {
    matmul_rotated_scalar(m, xr, 1, out);
}

/// Scalar `matmul_rotated`.
pub(crate) fn matmul_rotated_scalar(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) {
    let t = m.table();
    match m.width {
        CqWidth::B1 => matmul_with(m, &ByteTable::<8>::new(t), xr, n, out),
        CqWidth::B2 | CqWidth::Ternary => matmul_with(m, &ByteTable::<4>::new(t), xr, n, out),
        CqWidth::B3 => matmul_with(m, &RunTable3::new(t), xr, n, out),
        CqWidth::B4 => matmul_with(m, &ByteTable::<2>::new(t), xr, n, out),
    }
}

fn matmul_with<D: GroupDecode>(
    m: &CqMatrix<'_>,
    decoder: &D,
    xr: &[f32],
    n: usize,
    out: &mut [f32],
) {
    let (g, cp, rows) = (m.group, m.cols_padded, m.rows);
    let group_bytes = g * m.width.code_bits() / 8;
    let groups = m.groups_per_row();
    let mut wbuf = [0.0f32; MAX_GROUP];
    let w = &mut wbuf[..g];
    for r in 0..rows {
        let packed = &m.packed()[r * m.row_bytes()..][..m.row_bytes()];
        let norms = &m.norms()[r * groups * 2..][..groups * 2];
        let mut j0 = 0;
        while j0 < n {
            let t = TILE.min(n - j0);
            let mut racc = [[0.0f32; 4]; TILE];
            for gi in 0..groups {
                decoder.group(&packed[gi * group_bytes..][..group_bytes], w);
                let norm = f16::at(norms, gi);
                for (jj, acc) in racc[..t].iter_mut().enumerate() {
                    let x = &xr[(j0 + jj) * cp + gi * g..][..g];
                    let s = group_lanes4(w, x);
                    for i in 0..4 {
                        acc[i] += s[i] * norm;
                    }
                }
            }
            for (jj, acc) in racc[..t].iter().enumerate() {
                out[(j0 + jj) * rows + r] = vector::finish4(*acc);
            }
            j0 += t;
        }
    }
}

/// One group's 4 lane sums: lane `i` accumulates `w[k] * x[k]` for `k ≡ i (mod 4)` in code
/// order, from zero.
#[inline(always)]
fn group_lanes4(w: &[f32], x: &[f32]) -> [f32; 4] {
    let mut s = [0.0f32; 4];
    for (wc, xc) in w.chunks_exact(4).zip(x.chunks_exact(4)) {
        for i in 0..4 {
            s[i] += wc[i] * xc[i];
        }
    }
    s
}
