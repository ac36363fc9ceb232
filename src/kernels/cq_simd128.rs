//! wasm32 SIMD128 twin of the CQ matvec/matmul in [`super::cq`], bit-identical to the scalar kernel.
//!
//! Decoding turns 16 codes into four f32x4 weight vectors in code order by table lookup: each
//! packed byte (1, 2, 4 bits, ternary) or each 12-bit run of four codes (3 bits) indexes a table,
//! built once per call, of the weights it encodes. Per 4 weights that is one or two scalar index
//! loads and one vector load (two 64-bit half loads at 4 bits) — cheaper in V8 than unpacking
//! codes into lanes and looking them up with `i8x16.swizzle`s, which costs about twice as many
//! instructions (swizzle range fix-ups and byte-plane re-interleaving).
//!
//! Accumulation follows the shared order documented in `cq.rs`: four f32x4 accumulators per
//! group (lane i of 16 takes codes k ≡ i mod 16), combined `(a0 + a1) + (a2 + a3)`, scaled by the
//! group norm into a running row vector, finished `(r0 + r2) + (r1 + r3)`.
use core::arch::wasm32::*;

use super::cq::{CqMatrix, CqWidth, MAX_GROUP, TILE};
use super::f16;

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
        let (a, b) = unsafe { (&self.by_byte[usize::from(*p)], &self.by_byte[usize::from(*p.add(1))]) };
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
        let pair = |b: usize| u64::from(table[b & 15].to_bits()) | u64::from(table[b >> 4].to_bits()) << 32;
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
    // One input (every decode step): the fused kernel, ~1.7x faster than decoding each group into
    // a buffer and reading it back (same sums, so still bit-identical).
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

/// Fused decode + dot; the caller checked `xr.len() >= cols_padded` and `out.len() >= rows`.
fn matvec<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], out: &mut [f32]) {
    // The shipped models' group (128): a copy with the chunk loop fully unrolled.
    match m.group() / 16 {
        8 => matvec_chunks(m, dec, xr, out, 8),
        chunks => matvec_chunks(m, dec, xr, out, chunks),
    }
}

#[inline(always)]
fn matvec_chunks<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], out: &mut [f32], chunks: usize) {
    let (groups, row_bytes) = (m.groups_per_row(), m.row_bytes());
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == m.rows() * row_bytes && xr.len() >= m.cols_padded());
    for (r, o) in out[..m.rows()].iter_mut().enumerate() {
        let row_norms = &norms[r * groups * 2..][..groups * 2];
        // SAFETY: the row's codes are `row_bytes = groups * chunks * D::BYTES` bytes of `packed`
        // (checked at construction); x offsets stay below cols_padded <= xr.len().
        unsafe {
            let mut p = packed.as_ptr().add(r * row_bytes);
            let mut x = xr.as_ptr();
            let mut racc = f32x4_splat(0.0);
            for gi in 0..groups {
                let (mut a0, mut a1, mut a2, mut a3) =
                    (f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0));
                for _ in 0..chunks {
                    let [w0, w1, w2, w3] = dec.weights(p);
                    a0 = f32x4_add(a0, f32x4_mul(w0, v128_load(x as *const v128)));
                    a1 = f32x4_add(a1, f32x4_mul(w1, v128_load(x.add(4) as *const v128)));
                    a2 = f32x4_add(a2, f32x4_mul(w2, v128_load(x.add(8) as *const v128)));
                    a3 = f32x4_add(a3, f32x4_mul(w3, v128_load(x.add(12) as *const v128)));
                    p = p.add(D::BYTES);
                    x = x.add(16);
                }
                let s = f32x4_add(f32x4_add(a0, a1), f32x4_add(a2, a3));
                racc = f32x4_add(racc, f32x4_mul(s, f32x4_splat(f16::at(row_norms, gi))));
            }
            *o = finish(racc);
        }
    }
}

/// Decode each group once per tile of up to `TILE` inputs; per (input, row) the arithmetic is the
/// same sequence as [`matvec`], so results are bit-identical.
fn matmul<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], n: usize, out: &mut [f32]) {
    match m.group() / 16 {
        8 => matmul_chunks(m, dec, xr, n, out, 8),
        chunks => matmul_chunks(m, dec, xr, n, out, chunks),
    }
}

#[inline(always)]
fn matmul_chunks<D: Decode>(m: &CqMatrix<'_>, dec: &D, xr: &[f32], n: usize, out: &mut [f32], chunks: usize) {
    let (g, groups, row_bytes, cp, rows) = (m.group(), m.groups_per_row(), m.row_bytes(), m.cols_padded(), m.rows());
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == rows * row_bytes && xr.len() >= n * cp && out.len() >= n * rows);
    let mut wbuf = [f32x4_splat(0.0); MAX_GROUP / 4];
    for r in 0..rows {
        let row_norms = &norms[r * groups * 2..][..groups * 2];
        let mut j0 = 0;
        while j0 < n {
            let t = TILE.min(n - j0);
            let mut racc = [f32x4_splat(0.0); TILE];
            for gi in 0..groups {
                // SAFETY: group gi's codes lie inside row r's `row_bytes` (checked at construction).
                unsafe {
                    let mut p = packed.as_ptr().add(r * row_bytes + gi * chunks * D::BYTES);
                    for c in 0..chunks {
                        let w = dec.weights(p);
                        wbuf[4 * c..4 * c + 4].copy_from_slice(&w);
                        p = p.add(D::BYTES);
                    }
                }
                let norm = f32x4_splat(f16::at(row_norms, gi));
                for (jj, acc) in racc[..t].iter_mut().enumerate() {
                    let xg = &xr[(j0 + jj) * cp + gi * g..][..g];
                    let (mut a0, mut a1, mut a2, mut a3) =
                        (f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0));
                    for (w, x) in wbuf[..4 * chunks].chunks_exact(4).zip(xg.chunks_exact(16)) {
                        // SAFETY: `x` is a 16-float chunk.
                        unsafe {
                            let x = x.as_ptr();
                            a0 = f32x4_add(a0, f32x4_mul(w[0], v128_load(x as *const v128)));
                            a1 = f32x4_add(a1, f32x4_mul(w[1], v128_load(x.add(4) as *const v128)));
                            a2 = f32x4_add(a2, f32x4_mul(w[2], v128_load(x.add(8) as *const v128)));
                            a3 = f32x4_add(a3, f32x4_mul(w[3], v128_load(x.add(12) as *const v128)));
                        }
                    }
                    let s = f32x4_add(f32x4_add(a0, a1), f32x4_add(a2, a3));
                    *acc = f32x4_add(*acc, f32x4_mul(s, norm));
                }
            }
            for (jj, acc) in racc[..t].iter().enumerate() {
                out[(j0 + jj) * rows + r] = finish(*acc);
            }
            j0 += t;
        }
    }
}
