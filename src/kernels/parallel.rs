//! The kernels' one seam for parallel work: a row-wise matrix product split into row chunks.
//!
//! Without the `threads` feature everything here runs on the calling thread, as one chunk. With
//! it, chunks run on rayon's pool (natively; in the threaded wasm build the pool's threads are Web
//! Workers over shared memory, started by `web::threads`). Each output row is still computed by
//! the same serial kernel with the same operation order, so results are bit-identical for any
//! number of threads; only which thread computes a row changes.
//!
//! Handing work to another thread costs a wake-up and a join (microseconds natively, tens of
//! them in a browser), so a product is split only when each chunk gets at least
//! [`MIN_CHUNK_WORK`] multiply-adds, and into no more chunks than there are threads.
use core::ops::Range;

/// Least multiply-adds worth a chunk of its own (measured: below this the hand-off costs more
/// than the second thread saves; see BENCHMARKS.md, "threads").
#[cfg_attr(not(feature = "threads"), allow(dead_code))]
const MIN_CHUNK_WORK: usize = 1 << 17;

/// Chunk boundaries fall on multiples of this many rows, so a kernel that blocks rows keeps
/// whole blocks.
#[cfg_attr(not(feature = "threads"), allow(dead_code))]
const ROW_ALIGN: usize = 16;

/// Threads the pool runs (1 without the `threads` feature).
pub fn threads() -> usize {
    #[cfg(feature = "threads")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "threads"))]
    {
        1
    }
}

/// Rows per chunk for `rows` rows of `work_per_row` multiply-adds each on `threads` threads, or
/// `None` when the product should stay on one thread.
#[cfg_attr(not(feature = "threads"), allow(dead_code))]
fn chunk_rows(rows: usize, work_per_row: usize, threads: usize) -> Option<usize> {
    let worth = rows.saturating_mul(work_per_row) / MIN_CHUNK_WORK;
    let chunks = threads.min(worth).min(rows.div_ceil(ROW_ALIGN));
    if chunks < 2 {
        return None;
    }
    Some(rows.div_ceil(chunks).div_ceil(ROW_ALIGN) * ROW_ALIGN)
}

/// Runs a row-wise product of `n` inputs whose result is laid out `out[j * rows + r]` (input `j`,
/// row `r`). `f(range, part)` computes rows `range` for every input into `part`, laid out
/// `part[j * range.len() + i]`: the same layout as the whole product, for a matrix of just those
/// rows. `work_per_row` (multiply-adds per row, all inputs together) decides the split.
pub fn rows<F>(rows: usize, n: usize, work_per_row: usize, out: &mut [f32], f: F)
where
    F: Fn(Range<usize>, &mut [f32]) + Sync,
{
    let out = &mut out[..n * rows];
    #[cfg(feature = "threads")]
    if let Some(per) = chunk_rows(rows, work_per_row, threads()) {
        return pool::rows(rows, n, per, out, &f);
    }
    let _ = work_per_row;
    f(0..rows, out)
}

#[cfg(feature = "threads")]
mod pool {
    use core::cell::Cell;
    use core::ops::Range;
    use rayon::prelude::*;
    use std::vec::Vec;

    std::thread_local! {
        /// A chunk's result before it is scattered into the interleaved output (n > 1): grown to
        /// the largest chunk once per thread, then reused.
        static PART: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
    }

    /// The output pointer shared by the chunks; each writes only its own rows.
    struct Out(*mut f32);
    // SAFETY: chunks write disjoint elements (distinct rows), and `rows` returns only after every
    // chunk has finished.
    unsafe impl Sync for Out {}

    impl Out {
        /// Element `i` (a method, so closures capture the whole `Sync` wrapper, not its field).
        fn at(&self, i: usize) -> *mut f32 {
            self.0.wrapping_add(i)
        }
    }

    pub(super) fn rows<F>(rows: usize, n: usize, per: usize, out: &mut [f32], f: &F)
    where
        F: Fn(Range<usize>, &mut [f32]) + Sync,
    {
        let range = |c: usize| c * per..rows.min((c + 1) * per);
        if n == 1 {
            // One input: a chunk's rows are one contiguous run of the output.
            out.par_chunks_mut(per).enumerate().for_each(|(c, part)| f(range(c), part));
            return;
        }
        let dst = Out(out.as_mut_ptr());
        (0..rows.div_ceil(per)).into_par_iter().for_each(|c| {
            let range = range(c);
            let len = range.len();
            // Taken out of the cell, so a nested use on this thread would start its own buffer.
            let mut part = PART.take();
            part.resize(n * len, 0.0);
            f(range.clone(), &mut part);
            for j in 0..n {
                let src = &part[j * len..(j + 1) * len];
                // SAFETY: `out` holds n * rows floats; row `range.start + i` of input `j` is
                // written by this chunk only.
                unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst.at(j * rows + range.start), len) };
            }
            PART.set(part);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_products_stay_on_one_thread() {
        assert_eq!(chunk_rows(4, 3072, 8), None);
        assert_eq!(chunk_rows(2048, 16, 8), None);
        assert_eq!(chunk_rows(16384, 768, 1), None);
    }

    #[test]
    fn chunks_cover_the_rows_in_aligned_steps_one_per_thread() {
        let per = chunk_rows(16384, 768, 2).unwrap();
        assert_eq!(per, 8192);
        let per = chunk_rows(1000, 1 << 16, 3).unwrap();
        assert_eq!(per % ROW_ALIGN, 0);
        assert!(per * 3 >= 1000 && per * 2 < 1000);
    }

    /// Whatever the split, every (input, row) lands where the whole product puts it.
    #[test]
    fn every_row_of_every_input_lands_in_place() {
        let rows = 1000;
        for n in [1, 3] {
            let mut out = vec![0.0f32; n * rows];
            rows_with(rows, n, 1 << 20, &mut out);
            for j in 0..n {
                for r in 0..rows {
                    assert_eq!(out[j * rows + r], (j * 10_000 + r) as f32);
                }
            }
        }
    }

    /// A CQ product big enough to split equals, bit for bit, the same rows computed in blocks
    /// too small to split (each block on one thread).
    #[test]
    fn a_split_cq_product_equals_its_rows_computed_one_block_at_a_time() {
        use crate::kernels::cq::{CqMatrix, CqWidth};
        use crate::kernels::test_util::{pseudo_random, pseudo_random_bytes};
        let (rows, cols, group) = (1000, 768, 128);
        let packed = pseudo_random_bytes(rows * cols / 2, 11);
        let norms: Vec<u8> = (0..rows * cols / group).flat_map(|i| [(i * 7) as u8, 0x38 + (i % 5) as u8]).collect();
        let levels = pseudo_random(16, 2);
        let m = CqMatrix::from_parts(rows, cols, group, CqWidth::B4, &packed, &norms, &levels).unwrap();
        for n in [1, 5, 17] {
            let xr = pseudo_random(n * cols, n as u32);
            let mut whole = vec![0.0f32; n * rows];
            m.matmul_rotated(&xr, n, &mut whole);
            let mut part = vec![0.0f32; n * 8];
            for start in (0..rows).step_by(8) {
                m.row_block(start, 8).unwrap().matmul_rotated(&xr, n, &mut part);
                for j in 0..n {
                    assert_eq!(whole[j * rows + start..][..8], part[j * 8..][..8], "n {n} rows {start}..");
                }
            }
            if n == 1 {
                let mut single = vec![0.0f32; rows];
                m.matvec_rotated(&xr, &mut single);
                assert_eq!(single, whole);
            }
        }
    }

    fn rows_with(nrows: usize, n: usize, work: usize, out: &mut [f32]) {
        rows(nrows, n, work, out, |range, part| {
            let len = range.len();
            for j in 0..n {
                for (i, r) in range.clone().enumerate() {
                    part[j * len + i] = (j * 10_000 + r) as f32;
                }
            }
        });
    }
}
