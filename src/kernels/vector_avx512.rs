//! x86-64 AVX-512 variant of [`super::vector::axpy_i8_keys`], chosen at run time and
//! bit-identical to the key-by-key form.
//!
//! Key by key, every output row is loaded and stored again for each key: at a long context
//! attention's weighted sum of values spent most of its time moving the outputs. Here a tile of
//! up to [`TILE_ROWS`] output rows x 64 columns stays in registers (24 of the 32) across all the
//! keys; each key's 64 codes are widened and scaled once for the tile's rows. Each element still
//! gets `y += a * (q * scale)`, key after key, products rounded (no fused multiply-add).
use core::arch::x86_64::*;

/// Output rows per tile.
const TILE_ROWS: usize = 6;
/// 16-float registers per tile row (64 columns).
const TILE_VECS: usize = 4;

/// Runs `axpy_i8_keys` with AVX-512 when the CPU has it; false otherwise. The caller checked
/// that `w` holds whole rows of `n` weights, one per row of `y`.
pub(crate) fn axpy_i8_keys<'a>(w: &[f32], n: usize, keys: impl Iterator<Item = (&'a [i8], f32)> + Clone, y: &mut [f32]) -> bool {
    if !super::has_avx512() {
        return false;
    }
    let rows = if n == 0 { 0 } else { w.len() / n };
    if rows == 0 || y.is_empty() {
        return true;
    }
    let d = y.len() / rows;
    for g0 in (0..rows).step_by(TILE_ROWS) {
        let tile = &mut y[g0 * d..(g0 + TILE_ROWS).min(rows) * d];
        let w = &w[g0 * n..];
        // SAFETY: AVX-512 F/BW/VL are present (checked above).
        unsafe {
            match tile.len() / d {
                1 => run::<1>(w, n, keys.clone(), d, tile),
                2 => run::<2>(w, n, keys.clone(), d, tile),
                3 => run::<3>(w, n, keys.clone(), d, tile),
                4 => run::<4>(w, n, keys.clone(), d, tile),
                5 => run::<5>(w, n, keys.clone(), d, tile),
                _ => run::<TILE_ROWS>(w, n, keys.clone(), d, tile),
            }
        }
    }
    true
}

/// `R` output rows of `d` columns (`y`), 64 columns at a time; row g's weights at `w[g * n..]`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn run<'a, const R: usize>(w: &[f32], n: usize, keys: impl Iterator<Item = (&'a [i8], f32)> + Clone, d: usize, y: &mut [f32]) {
    assert!(y.len() == R * d && w.len() >= R * n);
    for c0 in (0..d).step_by(16 * TILE_VECS) {
        // Lanes of each register inside the row (the last ones may be partial or empty).
        let mask: [__mmask16; TILE_VECS] = core::array::from_fn(|j| {
            let left = d.saturating_sub(c0 + 16 * j).min(16);
            ((1u32 << left) - 1) as __mmask16
        });
        // SAFETY: masked loads and stores touch only columns below d of the R rows of y and of
        // each key's row (checked length d); a register wholly past d has an empty mask and
        // touches nothing (its address wraps, never dereferenced); AVX-512 (this function's
        // features).
        unsafe {
            let mut acc: [[__m512; TILE_VECS]; R] =
                core::array::from_fn(|g| core::array::from_fn(|j| _mm512_maskz_loadu_ps(mask[j], y.as_ptr().wrapping_add(g * d + c0 + 16 * j))));
            for (i, (q, scale)) in keys.clone().take(n).enumerate() {
                assert_eq!(q.len(), d, "axpy_i8_keys: a key row's length differs from y's rows");
                let s = _mm512_set1_ps(scale);
                let deq: [__m512; TILE_VECS] = core::array::from_fn(|j| {
                    let codes = _mm_maskz_loadu_epi8(mask[j], q.as_ptr().wrapping_add(c0 + 16 * j));
                    _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(codes)), s)
                });
                for (g, acc) in acc.iter_mut().enumerate() {
                    let a = _mm512_set1_ps(*w.get_unchecked(g * n + i));
                    for (acc, deq) in acc.iter_mut().zip(&deq) {
                        *acc = _mm512_add_ps(*acc, _mm512_mul_ps(a, *deq));
                    }
                }
            }
            for (g, acc) in acc.iter().enumerate() {
                for (j, acc) in acc.iter().enumerate() {
                    _mm512_mask_storeu_ps(y.as_mut_ptr().wrapping_add(g * d + c0 + 16 * j), mask[j], *acc);
                }
            }
        }
    }
}
