//! x86-64 AVX-512 variant of the one-input CQ product (decode's matvec) in [`crate::kernels::cq`], chosen
//! at run time ahead of the AVX2 variant and bit-identical to the scalar kernel.
//!
//! Rows go in fours: a 16-float register holds the 4 lane sums of one row in each 128-bit lane,
//! so the order documented in `cq.rs` (one 4-lane accumulator per (row, input) and group, lane
//! i taking codes k ≡ i mod 4) runs unchanged in every lane while each input chunk, broadcast to
//! the four lanes, serves four rows. What AVX-512 buys over AVX2 is the lookup: `vpermps` over
//! 16 floats holds a whole 16-entry codebook and ignores index bits above the low 4 (narrower
//! codebooks are repeated to 16 entries, so the bits between select nothing else), so the
//! weights of 4 codes of 4 rows take one in-lane byte shuffle (each element gets the 32-bit
//! window holding its row's 4 codes), one `vpsrlvd` (its own code to the bottom) and one
//! `vpermps`: no mask, no blend, no pairing of rows across lanes (the AVX2 kernel's cost).
//!
//! Codes are read in units of 32 per row (two 16-code blocks, `4 * BITS` bytes, in the row's
//! 128-bit lane), so groups of 16 are left to the AVX2 kernel. As there, no fused multiply-add:
//! products round before they are added.
use core::arch::x86_64::*;

use super::avx2::{finish, row_sets};
use crate::kernels::cq::{CqMatrix, CqWidth};
use crate::kernels::f16;

/// Runs `matvec_rotated` with AVX-512 when the CPU has it and the group is at least 32 codes;
/// false otherwise (the caller then runs the next variant).
pub(crate) fn matvec_rotated(m: &CqMatrix<'_>, xr: &[f32], out: &mut [f32]) -> bool {
    if !crate::kernels::has_avx512() || m.group() < UNIT {
        return false;
    }
    // SAFETY: AVX-512 F/BW/VL are present (checked above); the caller checked the slice lengths.
    unsafe {
        match m.width() {
            CqWidth::B1 => run::<1>(m, xr, out),
            CqWidth::B2 | CqWidth::Ternary => run::<2>(m, xr, out),
            CqWidth::B3 => run::<3>(m, xr, out),
            CqWidth::B4 => run::<4>(m, xr, out),
        }
    }
    true
}

/// Codes per row per load.
const UNIT: usize = 32;
/// Sets of 4 rows per block: each loaded input chunk serves `4 * QUADS` rows.
const QUADS: usize = 2;

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn run<const BITS: usize>(m: &CqMatrix<'_>, xr: &[f32], out: &mut [f32]) {
    let rows = m.rows();
    let full = rows - rows % (4 * QUADS);
    let mut r = 0;
    // The codebook repeated every 2^BITS entries, so index bits above a code's own select nothing
    // else: no mask at any width.
    let table: [f32; 16] = core::array::from_fn(|j| m.table()[j % (1 << BITS)]);
    // SAFETY: 16 floats; AVX-512 (this function's features); row sets stay inside the matrix.
    unsafe {
        let table = _mm512_loadu_ps(table.as_ptr());
        while r < full {
            matvec::<BITS, QUADS>(m, table, xr, row_sets(r, rows), out);
            r += 4 * QUADS;
        }
        while r < rows {
            matvec::<BITS, 1>(m, table, xr, row_sets(r, rows), out);
            r += 4;
        }
    }
}

/// One unit of each row of a quad: row `k`'s `4 * BITS` bytes at `p[k]` in lane `k`.
/// SAFETY: `4 * BITS` bytes are readable at each `p[k]`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
#[inline]
unsafe fn load_unit<const BITS: usize>(p: [*const u8; 4]) -> __m512i {
    // SAFETY: a full 16-byte load at 4 bits, else a masked load of the unit's bytes only (caller).
    let lane = |q: *const u8| unsafe {
        if BITS == 4 {
            _mm_loadu_si128(q as *const __m128i)
        } else {
            _mm_maskz_loadu_epi8(((1u32 << (4 * BITS)) - 1) as u16, q as *const i8)
        }
    };
    let v = _mm512_castsi128_si512(lane(p[0]));
    let v = _mm512_inserti32x4::<1>(v, lane(p[1]));
    let v = _mm512_inserti32x4::<2>(v, lane(p[2]));
    _mm512_inserti32x4::<3>(v, lane(p[3]))
}

/// Lookup indices of chunk `c` (codes `4c..4c + 4`) of a unit: element `i` of lane `k` holds row
/// k's code `4c + i` in its low `BITS` bits (`vpermps` ignores bits above the low 4, the
/// repeated codebook those between).
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
#[inline]
unsafe fn chunk_index<const BITS: usize>(unit: __m512i, c: usize) -> __m512i {
    let first = 4 * BITS * c;
    // The chunk's 32-bit window starts at a dword when the chunk fits inside one (1, 2 and 4
    // bits: chunks of one dword then share the shuffle), else at the chunk's first byte (3 bits).
    let byte = if first % 32 + 4 * BITS <= 32 { first / 32 * 4 } else { first / 8 };
    let window = i32::from_le_bytes([0, 1, 2, 3].map(|i| (byte + i) as u8));
    let s = (first - 8 * byte) as i32;
    let b = BITS as i32;
    let shifts = _mm512_setr_epi32(
        s,
        s + b,
        s + 2 * b,
        s + 3 * b,
        s,
        s + b,
        s + 2 * b,
        s + 3 * b,
        s,
        s + b,
        s + 2 * b,
        s + 3 * b,
        s,
        s + b,
        s + 2 * b,
        s + 3 * b,
    );
    _mm512_srlv_epi32(_mm512_shuffle_epi8(unit, _mm512_set1_epi32(window)), shifts)
}

/// Asks for the next `bytes` codes of each row `ahead` bytes on: the same place in the block
/// after this one. A block reads its rows side by side, a few hundred bytes each, too short for
/// the hardware prefetcher to follow so many streams, so a matrix past the last-level cache
/// waited on memory at every row (a wrapping address: a prefetch never faults; past the end it
/// is wasted). The AVX2 kernel, slower per byte, gains nothing from it (measured).
#[inline]
fn prefetch_ahead<const Q: usize>(p: &[[*const u8; 4]; Q], ahead: usize, bytes: usize) {
    for q in p.iter().flatten() {
        for line in (0..bytes).step_by(64) {
            // SAFETY: SSE (baseline on x86-64); a prefetch reads nothing the program sees.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(ahead + line) as *const i8) };
        }
    }
}

/// The group norms of a quad, each broadcast to its row's lane.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
#[inline]
unsafe fn quad_norm(norms: &[u8], groups: usize, quad: [usize; 4], gi: usize) -> __m512 {
    let [a, b, c, d] = quad.map(|r| f16::at(&norms[r * groups * 2..], gi));
    _mm512_setr_ps(a, a, a, a, b, b, b, b, c, c, c, c, d, d, d, d)
}

/// Fused decode + dot of `Q` quads of rows (`table`: the repeated codebook).
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn matvec<const BITS: usize, const Q: usize>(
    m: &CqMatrix<'_>,
    table: __m512,
    xr: &[f32],
    quads: [[usize; 4]; Q],
    out: &mut [f32],
) {
    let (groups, row_bytes, units) = (m.groups_per_row(), m.row_bytes(), m.group() / UNIT);
    let (packed, norms) = (m.packed(), m.norms());
    debug_assert!(packed.len() == m.rows() * row_bytes && xr.len() >= m.cols_padded());
    // SAFETY: every row of a quad exists; its codes are `row_bytes = groups * units * 4 * BITS`
    // bytes of `packed` (checked at construction); x offsets stay below cols_padded <= xr.len().
    unsafe {
        let mut p: [[*const u8; 4]; Q] =
            core::array::from_fn(|q| quads[q].map(|r| packed.as_ptr().add(r * row_bytes)));
        let mut x = xr.as_ptr();
        let mut racc = [_mm512_setzero_ps(); Q];
        for gi in 0..groups {
            prefetch_ahead(&p, 4 * Q * row_bytes, units * 4 * BITS);
            let mut acc = [_mm512_setzero_ps(); Q];
            for _ in 0..units {
                let xv: [__m512; UNIT / 4] =
                    core::array::from_fn(|c| _mm512_broadcast_f32x4(_mm_loadu_ps(x.add(4 * c))));
                for q in 0..Q {
                    let unit = load_unit::<BITS>(p[q]);
                    for (c, xv) in xv.iter().enumerate() {
                        let w = _mm512_permutexvar_ps(chunk_index::<BITS>(unit, c), table);
                        acc[q] = _mm512_add_ps(acc[q], _mm512_mul_ps(w, *xv));
                    }
                    p[q] = p[q].map(|r| r.add(4 * BITS));
                }
                x = x.add(UNIT);
            }
            for q in 0..Q {
                racc[q] = _mm512_add_ps(
                    racc[q],
                    _mm512_mul_ps(acc[q], quad_norm(norms, groups, quads[q], gi)),
                );
            }
        }
        for (racc, quad) in racc.iter().zip(&quads) {
            let sums = [
                _mm512_extractf32x4_ps::<0>(*racc),
                _mm512_extractf32x4_ps::<1>(*racc),
                _mm512_extractf32x4_ps::<2>(*racc),
                _mm512_extractf32x4_ps::<3>(*racc),
            ];
            for (&r, s) in quad.iter().zip(sums) {
                out[r] = finish(s);
            }
        }
    }
}
