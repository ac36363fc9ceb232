//! wasm32 SIMD128 twin of the CQ matvec/matmul in [`crate::kernels::cq`], bit-identical to the scalar kernel.
//!
//! Decoding turns 16 codes into four f32x4 weight vectors in code order by table lookup: each
//! packed byte (1, 2, 4 bits, ternary) or each 12-bit run of four codes (3 bits) indexes a table,
//! built once per call, of the weights it encodes. Per 4 weights that is one or two scalar index
//! loads and one vector load (two 64-bit half loads at 4 bits) — cheaper in V8 than unpacking
//! codes into lanes and looking them up with `i8x16.swizzle`s, which costs about twice as many
//! instructions (swizzle range fix-ups and byte-plane re-interleaving).
//!
//! Accumulation follows the shared order documented in `cq.rs`: one f32x4 accumulator per
//! (row, input) and group (lane i takes codes k ≡ i mod 4), scaled by the group norm into a
//! running vector, finished `(r0 + r2) + (r1 + r3)`. Blocking never changes that sequence:
//! the matvec runs [`MV_ROWS`] rows at a time so each input vector load serves them all; the
//! matmul decodes a row's group once per tile of inputs into a buffer and runs a
//! register-blocked micro-kernel of [`MM_INPUTS`] inputs over it, so each weight vector load
//! serves `MM_INPUTS` products (more rows per call spill V8's registers: BENCHMARKS.md).
use core::arch::wasm32::*;

use crate::kernels::cq::{CqMatrix, CqWidth, MAX_GROUP, TILE};
use crate::kernels::f16;

/// Produces the weights of 16 consecutive codes.
trait Decode {
    /// Packed bytes holding 16 codes.
    const BYTES: usize;
    /// SAFETY: `p` points to at least `BYTES` readable bytes.
    unsafe fn weights(&self, p: *const u8) -> [v128; 4];
}

/// 2-bit and ternary: the four weights of every possible packed byte.
struct Quads {
    by_byte: [v128; 256],
}

impl Quads {
    fn new(table: &[f32; 16]) -> Self {
        let by_byte = core::array::from_fn(|b| {
            let w = |i: usize| table[(b >> (2 * i)) & 3];
            f32x4(w(0), w(1), w(2), w(3))
        });
        Quads { by_byte }
    }
}

impl Decode for Quads {
    const BYTES: usize = 4;
    #[inline(always)]
    unsafe fn weights(&self, p: *const u8) -> [v128; 4] {
        // SAFETY: 4 readable bytes (caller).
        unsafe { core::array::from_fn(|i| self.by_byte[usize::from(*p.add(i))]) }
    }
}

/// 1-bit: the eight weights of every possible packed byte.
struct Octets {
    by_byte: [[v128; 2]; 256],
}

impl Octets {
    fn new(table: &[f32; 16]) -> Self {
        let by_byte = core::array::from_fn(|b| {
            let w = |i: usize| table[(b >> i) & 1];
            [f32x4(w(0), w(1), w(2), w(3)), f32x4(w(4), w(5), w(6), w(7))]
        });
        Octets { by_byte }
    }
}

impl Decode for Octets {
    const BYTES: usize = 2;
    #[inline(always)]
    unsafe fn weights(&self, p: *const u8) -> [v128; 4] {
        // SAFETY: 2 readable bytes (caller).
        let (a, b) =
            unsafe { (&self.by_byte[usize::from(*p)], &self.by_byte[usize::from(*p.add(1))]) };
        [a[0], a[1], b[0], b[1]]
    }
}

/// 4-bit: the two weights of every possible packed byte, as one 64-bit half-vector (low code's
/// weight in the low half, as little-endian lanes).
struct Pairs {
    by_byte: [u64; 256],
}

impl Pairs {
    fn new(table: &[f32; 16]) -> Self {
        let pair = |b: usize| {
            u64::from(table[b & 15].to_bits()) | u64::from(table[b >> 4].to_bits()) << 32
        };
        Pairs { by_byte: core::array::from_fn(pair) }
    }
}

impl Decode for Pairs {
    const BYTES: usize = 8;
    #[inline(always)]
    unsafe fn weights(&self, p: *const u8) -> [v128; 4] {
        // SAFETY: 8 readable bytes (caller); the half-vector loads read aligned table entries.
        unsafe {
            core::array::from_fn(|i| {
                let lo: *const u64 = &self.by_byte[usize::from(*p.add(2 * i))];
                let hi: *const u64 = &self.by_byte[usize::from(*p.add(2 * i + 1))];
                v128_load64_lane::<1>(v128_load64_zero(lo), hi)
            })
        }
    }
}

/// 3-bit: the four weights of every 12-bit run of four codes.
struct Quads3 {
    by_run: [v128; 4096],
}

impl Quads3 {
    fn new(table: &[f32; 16]) -> Self {
        let by_run = core::array::from_fn(|r| {
            let w = |i: usize| table[(r >> (3 * i)) & 7];
            f32x4(w(0), w(1), w(2), w(3))
        });
        Quads3 { by_run }
    }
}

impl Decode for Quads3 {
    const BYTES: usize = 6;
    #[inline(always)]
    unsafe fn weights(&self, p: *const u8) -> [v128; 4] {
        // SAFETY: 6 readable bytes (caller).
        let word = unsafe {
            u64::from(core::ptr::read_unaligned(p as *const u32))
                | u64::from(core::ptr::read_unaligned(p.add(4) as *const u16)) << 32
        };
        core::array::from_fn(|i| self.by_run[((word >> (12 * i)) & 0xfff) as usize])
    }
}

/// Rows per matvec block.
const MV_ROWS: usize = 2;
/// Inputs per matmul micro-kernel call.
const MM_INPUTS: usize = 8;

/// `(r0 + r2) + (r1 + r3)`.
#[inline(always)]
fn finish(r: v128) -> f32 {
    let t = f32x4_add(r, i32x4_shuffle::<2, 3, 0, 1>(r, r));
    f32x4_extract_lane::<0>(t) + f32x4_extract_lane::<1>(t)
}

pub(crate) fn matvec_rotated(m: &CqMatrix<'_>, xr: &[f32], out: &mut [f32]) {
    let t = m.table();
    match m.width() {
        CqWidth::B1 => matvec(m, &Octets::new(t), xr, out),
        CqWidth::B2 | CqWidth::Ternary => matvec(m, &Quads::new(t), xr, out),
        CqWidth::B3 => matvec(m, &Quads3::new(t), xr, out),
        CqWidth::B4 => matvec(m, &Pairs::new(t), xr, out),
    }
}

pub(crate) fn matmul_rotated(m: &CqMatrix<'_>, xr: &[f32], n: usize, out: &mut [f32]) {
    // One input (every decode step): the fused kernel, faster than decoding each group into a
    // buffer and reading it back (same sums, so still bit-identical).
    if n == 1 {
        return matvec_rotated(m, xr, out);
    }
    let t = m.table();
    match m.width() {
        CqWidth::B1 => matmul(m, &Octets::new(t), xr, n, out),
        CqWidth::B2 | CqWidth::Ternary => matmul(m, &Quads::new(t), xr, n, out),
        CqWidth::B3 => matmul(m, &Quads3::new(t), xr, n, out),
        CqWidth::B4 => matmul(m, &Pairs::new(t), xr, n, out),
    }
}

/// Fused decode + dot, [`MV_ROWS`] rows at a time; the caller checked `xr.len() >= cols_padded`
/// and `out.len() >= rows`.
fn matvec<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], out: &mut [f32]) {
    // The shipped models' group (128): a copy with the block loop fully unrolled.
    match m.group() / 16 {
        8 => matvec_blocks(m, dec, xr, out, 8),
        blocks => matvec_blocks(m, dec, xr, out, blocks),
    }
}

#[inline(always)]
fn matvec_blocks<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], out: &mut [f32], blocks: usize) {
    let rows = m.rows();
    let full = rows - rows % MV_ROWS;
    for r0 in (0..full).step_by(MV_ROWS) {
        matvec_rows::<D, MV_ROWS>(m, dec, xr, r0, blocks, &mut out[r0..r0 + MV_ROWS]);
    }
    for r0 in full..rows {
        matvec_rows::<D, 1>(m, dec, xr, r0, blocks, &mut out[r0..r0 + 1]);
    }
}

/// Rows `r0..r0 + R` of the matvec.
#[inline(always)]
fn matvec_rows<D: Decode, const R: usize>(
    m: &CqMatrix<'_>,
    dec: &D,
    xr: &[f32],
    r0: usize,
    blocks: usize,
    out: &mut [f32],
) {
    let (groups, row_bytes) = (m.groups_per_row(), m.row_bytes());
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(
        packed.len() == m.rows() * row_bytes && xr.len() >= m.cols_padded() && r0 + R <= m.rows()
    );
    // SAFETY: rows r0..r0 + R exist; each row's codes are `row_bytes = groups * blocks * D::BYTES`
    // bytes of `packed` (checked at construction); x offsets stay below cols_padded <= xr.len().
    unsafe {
        let mut p: [*const u8; R] =
            core::array::from_fn(|r| packed.as_ptr().add((r0 + r) * row_bytes));
        let mut x = xr.as_ptr();
        let mut racc = [f32x4_splat(0.0); R];
        for gi in 0..groups {
            let mut acc = [f32x4_splat(0.0); R];
            for _ in 0..blocks {
                let xv: [v128; 4] =
                    core::array::from_fn(|i| v128_load(x.add(4 * i) as *const v128));
                for r in 0..R {
                    let w = dec.weights(p[r]);
                    for i in 0..4 {
                        acc[r] = f32x4_add(acc[r], f32x4_mul(w[i], xv[i]));
                    }
                    p[r] = p[r].add(D::BYTES);
                }
                x = x.add(16);
            }
            for r in 0..R {
                let norm = f16::at(&norms[(r0 + r) * groups * 2..], gi);
                racc[r] = f32x4_add(racc[r], f32x4_mul(acc[r], f32x4_splat(norm)));
            }
        }
        for r in 0..R {
            out[r] = finish(racc[r]);
        }
    }
}

/// Row by row: per tile of up to `TILE` inputs and group, the row's codes are decoded once into a
/// buffer, then the micro-kernel runs [`MM_INPUTS`] inputs at a time over it, the last few one by
/// one.
fn matmul<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], n: usize, out: &mut [f32]) {
    match m.group() / 16 {
        8 => matmul_blocks(m, dec, xr, n, out, 8),
        blocks => matmul_blocks(m, dec, xr, n, out, blocks),
    }
}

#[inline(always)]
fn matmul_blocks<D: Decode>(
    m: &CqMatrix<'_>,
    dec: &D,
    xr: &[f32],
    n: usize,
    out: &mut [f32],
    blocks: usize,
) {
    let (g, groups, row_bytes, cp, rows) =
        (m.group(), m.groups_per_row(), m.row_bytes(), m.cols_padded(), m.rows());
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == rows * row_bytes && xr.len() >= n * cp && out.len() >= n * rows);
    let vecs = 4 * blocks;
    let mut wbuf = [f32x4_splat(0.0); MAX_GROUP / 4];
    let wbuf = &mut wbuf[..vecs];
    for r in 0..rows {
        let row_norms = &norms[r * groups * 2..][..groups * 2];
        let mut j0 = 0;
        while j0 < n {
            let t = TILE.min(n - j0);
            let mut racc = [f32x4_splat(0.0); TILE];
            for gi in 0..groups {
                // SAFETY: group gi's codes lie inside row r's `row_bytes` (checked at construction).
                unsafe {
                    let mut p = packed.as_ptr().add(r * row_bytes + gi * blocks * D::BYTES);
                    for b in 0..blocks {
                        wbuf[4 * b..4 * b + 4].copy_from_slice(&dec.weights(p));
                        p = p.add(D::BYTES);
                    }
                }
                let norm = f32x4_splat(f16::at(row_norms, gi));
                let x = &xr[j0 * cp + gi * g..];
                let mut jj = 0;
                while jj < t {
                    if jj + MM_INPUTS <= t {
                        let s = micro::<MM_INPUTS>(wbuf, &x[jj * cp..], cp, vecs);
                        for (acc, s) in racc[jj..jj + MM_INPUTS].iter_mut().zip(s) {
                            *acc = f32x4_add(*acc, f32x4_mul(s, norm));
                        }
                        jj += MM_INPUTS;
                    } else {
                        let [s] = micro::<1>(wbuf, &x[jj * cp..], cp, vecs);
                        racc[jj] = f32x4_add(racc[jj], f32x4_mul(s, norm));
                        jj += 1;
                    }
                }
            }
            for (jj, acc) in racc[..t].iter().enumerate() {
                out[(j0 + jj) * rows + r] = finish(*acc);
            }
            j0 += t;
        }
    }
}

/// One group's lane sums of `J` inputs against the weight vectors `w` (`vecs` of them): input
/// `j`'s group starts at `x[j * stride]`.
#[inline(always)]
fn micro<const J: usize>(w: &[v128], x: &[f32], stride: usize, vecs: usize) -> [v128; J] {
    assert!(w.len() >= vecs && x.len() >= (J - 1) * stride + 4 * vecs);
    let mut acc = [f32x4_splat(0.0); J];
    // SAFETY: the bounds above.
    unsafe {
        let (w, x) = (w.as_ptr(), x.as_ptr());
        for c in 0..vecs {
            let wv = *w.add(c);
            for (j, acc) in acc.iter_mut().enumerate() {
                *acc = f32x4_add(
                    *acc,
                    f32x4_mul(wv, v128_load(x.add(j * stride + 4 * c) as *const v128)),
                );
            }
        }
    }
    acc
}
