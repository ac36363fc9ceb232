//! x86-64 variants of [`crate::kernels::vector::axpy_i8_keys`], chosen at run time (AVX-512, else AVX2)
//! and bit-identical to the key-by-key form.
//!
//! Key by key, every output row is loaded and stored again for each key: at a long context
//! attention's weighted sum of values spent most of its time moving the outputs. Here a tile of
//! [`TILE_ROWS`] output rows x `C` columns stays in registers across all the keys; each key's
//! codes are widened and scaled once for the tile's rows. The tile is plain scalar code over
//! fixed-size arrays, compiled once per feature level so the compiler vectorises it with that
//! level's registers (16 columns a row with AVX2's 16 registers, 64 with AVX-512's 32). Each
//! element still gets `y += a * (q * scale)`, key after key, products rounded (Rust never fuses
//! a multiply and an add on its own).

/// Output rows per tile.
const TILE_ROWS: usize = 6;

/// Runs `axpy_i8_keys` with AVX-512 or AVX2 when the CPU has one; false otherwise. The caller
/// checked that `w` holds whole rows of `n` weights, one per row of `y`.
pub(crate) fn axpy_i8_keys<'a>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)> + Clone,
    y: &mut [f32],
) -> bool {
    if crate::kernels::has_avx512() {
        // SAFETY: AVX-512 F/BW/VL are present (checked above).
        unsafe { with_avx512(w, n, keys, y) };
    } else if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above).
        unsafe { with_avx2(w, n, keys, y) };
    } else {
        return false;
    }
    true
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn with_avx512<'a>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)> + Clone,
    y: &mut [f32],
) {
    tiles::<64>(w, n, keys, y);
}

#[target_feature(enable = "avx2")]
unsafe fn with_avx2<'a>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)> + Clone,
    y: &mut [f32],
) {
    tiles::<16>(w, n, keys, y);
}

/// Every tile of `y` (rows of `d = y.len() / rows` columns), `C` columns wide.
#[inline(always)]
fn tiles<'a, const C: usize>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)> + Clone,
    y: &mut [f32],
) {
    let rows = w.len().checked_div(n).unwrap_or(0);
    if rows == 0 || y.is_empty() {
        return;
    }
    let d = y.len() / rows;
    for g0 in (0..rows).step_by(TILE_ROWS) {
        let w = &w[g0 * n..];
        let y = &mut y[g0 * d..(g0 + TILE_ROWS).min(rows) * d];
        for c0 in (0..d).step_by(C) {
            match y.len() / d {
                1 => tile::<1, C>(w, n, keys.clone(), d, c0, y),
                2 => tile::<2, C>(w, n, keys.clone(), d, c0, y),
                3 => tile::<3, C>(w, n, keys.clone(), d, c0, y),
                4 => tile::<4, C>(w, n, keys.clone(), d, c0, y),
                5 => tile::<5, C>(w, n, keys.clone(), d, c0, y),
                _ => tile::<TILE_ROWS, C>(w, n, keys.clone(), d, c0, y),
            }
        }
    }
}

/// Columns `c0..c0 + C` (fewer at the end of a row) of the `R` rows of `y`, over every key.
#[inline(always)]
fn tile<'a, const R: usize, const C: usize>(
    w: &[f32],
    n: usize,
    keys: impl Iterator<Item = (&'a [i8], f32)>,
    d: usize,
    c0: usize,
    y: &mut [f32],
) {
    let cols = (d - c0).min(C);
    let mut acc = [[0.0f32; C]; R];
    for (g, acc) in acc.iter_mut().enumerate() {
        acc[..cols].copy_from_slice(&y[g * d + c0..][..cols]);
    }
    let mut deq = [0.0f32; C];
    for (i, (q, scale)) in keys.take(n).enumerate() {
        let q = &q[c0..c0 + cols];
        if cols == C {
            for (v, &u) in deq.iter_mut().zip(q) {
                *v = f32::from(u) * scale;
            }
        } else {
            // A row's last, narrower tile: the columns past it stay 0 and are never stored.
            for (v, &u) in deq[..cols].iter_mut().zip(q) {
                *v = f32::from(u) * scale;
            }
        }
        for (g, acc) in acc.iter_mut().enumerate() {
            let a = w[g * n + i];
            for (v, &e) in acc.iter_mut().zip(&deq) {
                *v += a * e;
            }
        }
    }
    for (g, acc) in acc.iter().enumerate() {
        y[g * d + c0..][..cols].copy_from_slice(&acc[..cols]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_util::{pseudo_random, pseudo_random_bytes};
    use crate::kernels::vector::axpy_i8_keys_rowwise;

    /// Each level this CPU has against the key-by-key form, bit for bit: whole and partial
    /// tiles of rows and columns.
    #[test]
    fn every_level_equals_the_key_by_key_form() {
        let levels: [(&str, bool, Kernel); 2] = [
            ("avx512", crate::kernels::has_avx512(), |w, n, k, y| unsafe {
                with_avx512(w, n, k, y)
            }),
            ("avx2", std::is_x86_feature_detected!("avx2"), |w, n, k, y| unsafe {
                with_avx2(w, n, k, y)
            }),
        ];
        for (name, present, kernel) in levels {
            if !present {
                eprintln!("no {name} on this CPU: that variant is not exercised");
                continue;
            }
            for d in [1usize, 5, 16, 48, 64, 100] {
                for rows in [1usize, 5, 6, 7, 16] {
                    let n = 37;
                    let values: Vec<i8> =
                        pseudo_random_bytes(n * d, 20).into_iter().map(|b| b as i8).collect();
                    let scales = pseudo_random(n, 21);
                    let keys = values.chunks_exact(d).zip(scales.iter().copied());
                    let w = pseudo_random(rows * n, 22);
                    let mut got = pseudo_random(rows * d, 23);
                    let mut want = got.clone();
                    // SAFETY: the CPU has this level (checked above).
                    unsafe { kernel(&w, n, keys.clone(), &mut got) };
                    axpy_i8_keys_rowwise(&w, n, keys, &mut want);
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "{name} d={d} rows={rows}");
                }
            }
        }
    }

    type Keys<'a> = core::iter::Zip<
        core::slice::ChunksExact<'a, i8>,
        core::iter::Copied<core::slice::Iter<'a, f32>>,
    >;
    type Kernel = unsafe fn(&[f32], usize, Keys<'_>, &mut [f32]);
}
