//! The kernels' one seam for parallel work: independent items (matrix rows, attention heads)
//! split into chunks that may run on other threads.
//!
//! Without the `threads` feature everything here runs on the calling thread, as one chunk. With
//! it, chunks run on rayon's pool (natively; in the threaded wasm build the pool's threads are Web
//! Workers over shared memory, started by `web::threads`). Each item is still computed by the same
//! serial code with the same operation order, so results are bit-identical for any number of
//! threads; only which thread computes an item changes.
//!
//! Handing work to another thread costs a wake-up and a join (microseconds natively, tens of
//! them in a browser), so work is split only when each chunk gets at least [`MIN_CHUNK_WORK`]
//! multiply-adds (by default), and into no more chunks than there are threads.
use core::ops::Range;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Least multiply-adds worth a chunk of its own by default: some 50-100 µs of wasm SIMD work, well
/// above a hand-off to another thread, and enough to keep the smallest projections (k, v, the
/// mHC ones) on one thread. Not yet tuned on quiet cores (BENCHMARKS.md, "Threads").
pub const MIN_CHUNK_WORK: usize = 1 << 17;

static MIN_WORK: AtomicUsize = AtomicUsize::new(MIN_CHUNK_WORK);

/// Sets the least work worth a chunk (tests split everything with 1 and nothing with
/// `usize::MAX`; the default is [`MIN_CHUNK_WORK`]).
pub fn set_min_chunk_work(work: usize) {
    MIN_WORK.store(work.max(1), Ordering::Relaxed);
}

/// Most jobs one [`rows_each`] split covers (their outputs are tabled on the stack, so a split
/// allocates nothing); more are split a batch at a time.
const MAX_JOBS: usize = 8;

/// Row chunks start on multiples of this many rows, so a kernel that blocks rows keeps whole
/// blocks.
#[cfg_attr(not(feature = "threads"), allow(dead_code))]
const ROW_ALIGN: usize = 16;

/// Whether the wasm pool's threads run: wasm32 has no threads rayon could start by itself (its
/// default pool would fail to spawn), so work stays serial until `web::threads` says so.
#[cfg(all(feature = "threads", target_arch = "wasm32"))]
static WASM_POOL: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Marks the wasm pool as running (called once its threads are up).
#[cfg(all(feature = "threads", target_arch = "wasm32"))]
pub fn wasm_pool_started() {
    WASM_POOL.store(true, core::sync::atomic::Ordering::Release);
}

/// Threads work is split across: rayon's pool (natively its default size, `RAYON_NUM_THREADS`
/// to change it), 1 without the `threads` feature or before the wasm pool has started.
pub fn threads() -> usize {
    #[cfg(all(feature = "threads", target_arch = "wasm32"))]
    if !WASM_POOL.load(core::sync::atomic::Ordering::Acquire) {
        return 1;
    }
    #[cfg(feature = "threads")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "threads"))]
    {
        1
    }
}

/// Runs `f` (a forward pass) on one of the pool's threads (the calling thread waits), so the
/// splits inside it are joins between pool threads rather than hand-offs from a thread outside
/// the pool, each of which costs a wake-up there and one back. Without a pool (one thread), just
/// `f()`.
pub fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    #[cfg(feature = "threads")]
    if threads() > 1 {
        return rayon::scope(|_| f());
    }
    f()
}

/// Items per chunk for `items` items of `work_per_item` multiply-adds each on `threads` threads,
/// a multiple of `align`; `None` when the work should stay on one thread.
#[cfg_attr(not(feature = "threads"), allow(dead_code))]
fn chunk_items(items: usize, work_per_item: usize, align: usize, threads: usize) -> Option<usize> {
    let worth = items.saturating_mul(work_per_item) / MIN_WORK.load(Ordering::Relaxed);
    let chunks = threads.min(worth).min(items.div_ceil(align));
    if chunks < 2 {
        return None;
    }
    Some(items.div_ceil(chunks).div_ceil(align) * align)
}

/// Disjoint mutable parts of a run of consecutive items, which can be cut between two items.
pub trait Parts: Send + Sized {
    /// The parts of the first `items` items, and those of the rest.
    fn split(self, items: usize) -> (Self, Self);
}

/// A slice holding `.1` consecutive elements per item.
pub struct PerItem<'s, T>(pub &'s mut [T], pub usize);

impl<T: Send> Parts for PerItem<'_, T> {
    fn split(self, items: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at_mut(items * self.1);
        (PerItem(a, self.1), PerItem(b, self.1))
    }
}

/// Several slices, each holding its own count of elements per item.
impl<T: Send, const N: usize> Parts for [PerItem<'_, T>; N] {
    fn split(mut self, items: usize) -> (Self, Self) {
        let first = core::array::from_fn(|k| {
            let part = &mut self[k];
            let (a, b) = core::mem::take(&mut part.0).split_at_mut(items * part.1);
            part.0 = b;
            PerItem(a, part.1)
        });
        (first, self)
    }
}

/// Nothing per item (the work writes through its own means).
impl Parts for () {
    fn split(self, _: usize) -> (Self, Self) {
        ((), ())
    }
}

impl<A: Parts, B: Parts> Parts for (A, B) {
    fn split(self, items: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split(items);
        let (b0, b1) = self.1.split(items);
        ((a0, b0), (a1, b1))
    }
}

impl<A: Parts, B: Parts, C: Parts> Parts for (A, B, C) {
    fn split(self, items: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split(items);
        let ((b0, c0), (b1, c1)) = (self.1, self.2).split(items);
        ((a0, b0, c0), (a1, b1, c1))
    }
}

/// Runs `f(range, parts)` over chunks of the items `0..items` (each `work_per_item` multiply-adds)
/// with each chunk's own `parts`: all of them at once on this thread, or split across threads.
pub fn items<P, F>(items: usize, work_per_item: usize, parts: P, f: F)
where
    P: Parts,
    F: Fn(Range<usize>, P) + Sync,
{
    split(items, work_per_item, 1, parts, &f)
}

/// Runs a row-wise product of `n` inputs whose result is laid out `out[j * rows + r]` (input `j`,
/// row `r`). `f(range, part)` computes rows `range` for every input into `part`, laid out
/// `part[j * range.len() + i]`: the same layout as the whole product, for a matrix of just those
/// rows. `work_per_row` (multiply-adds per row, all inputs together) decides the split.
pub fn rows<F>(rows: usize, n: usize, work_per_row: usize, out: &mut [f32], f: F)
where
    F: Fn(Range<usize>, &mut [f32]) + Sync,
{
    rows_each(n, work_per_row, &mut [(rows, out)], |&rows| rows, |_, range, part| f(range, part));
}

/// [`rows`] for several products of the same `n` inputs at once (the q, k, v and gate
/// projections of one normalised input): job `(data, out)` is a product of `rows(data)` rows
/// into `out`, and `f(data, range, part)` computes its rows `range` as [`rows`]' `f` does.
/// The jobs' rows are split as one run, so the whole costs one hand-off and products too small
/// to split on their own (k, v) share the threads with the rest. `work_per_row` is the same for
/// every job (they read the same inputs).
#[cfg_attr(not(feature = "threads"), allow(unused_variables))]
pub fn rows_each<J, R, F>(
    n: usize,
    work_per_row: usize,
    jobs: &mut [(J, &mut [f32])],
    rows: R,
    f: F,
) where
    J: Sync,
    R: Fn(&J) -> usize + Sync,
    F: Fn(&J, Range<usize>, &mut [f32]) + Sync,
{
    for batch in jobs.chunks_mut(MAX_JOBS) {
        #[cfg(feature = "threads")]
        if pool::rows_each(n, work_per_row, batch, &rows, &f) {
            continue;
        }
        for (data, out) in batch.iter_mut() {
            let r = rows(data);
            f(data, 0..r, &mut out[..n * r]);
        }
    }
}

fn split<P, F>(items: usize, work_per_item: usize, align: usize, parts: P, f: &F)
where
    P: Parts,
    F: Fn(Range<usize>, P) + Sync,
{
    #[cfg(feature = "threads")]
    if let Some(per) = chunk_items(items, work_per_item, align, threads()) {
        return pool::join(0..items, per, parts, f);
    }
    let _ = (work_per_item, align);
    f(0..items, parts)
}

#[cfg(feature = "threads")]
mod pool {
    use core::cell::Cell;
    use core::ops::Range;
    use std::vec::Vec;

    use super::{Parts, MAX_JOBS, ROW_ALIGN};

    /// Halves `range` at a chunk boundary until chunks of `per` items remain, the halves running
    /// as rayon joins.
    pub(super) fn join<P, F>(range: Range<usize>, per: usize, parts: P, f: &F)
    where
        P: Parts,
        F: Fn(Range<usize>, P) + Sync,
    {
        if range.len() <= per {
            return f(range, parts);
        }
        let left = range.len().div_ceil(per) / 2 * per;
        let (a, b) = parts.split(left);
        let mid = range.start + left;
        rayon::join(|| join(range.start..mid, per, a, f), || join(mid..range.end, per, b, f));
    }

    std::thread_local! {
        /// A chunk's result before it is scattered into the interleaved output: grown to the
        /// largest chunk once per thread, then reused.
        static PART: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
    }

    /// A job's output pointer, shared by the chunks; each writes only its own rows.
    #[derive(Clone, Copy)]
    struct Out(*mut f32);
    // SAFETY: chunks write disjoint elements (distinct rows), and `rows_each` returns only
    // after every chunk has finished.
    unsafe impl Sync for Out {}

    impl Out {
        /// Element `i` (a method, so closures capture the whole `Sync` wrapper, not its field).
        fn at(&self, i: usize) -> *mut f32 {
            self.0.wrapping_add(i)
        }
    }

    /// `super::rows_each` for at most [`MAX_JOBS`] jobs when the work is worth splitting (else
    /// `false`, nothing done). The jobs' rows, each job's rounded up to whole [`ROW_ALIGN`]
    /// blocks, form one run split into aligned chunks, so every cut inside a job falls on a
    /// block boundary. A chunk computes each job's rows it covers: for
    /// one input straight into the output (one contiguous run), for several into a buffer of
    /// its own, then copied into place as `n` runs.
    pub(super) fn rows_each<J, R, F>(
        n: usize,
        work_per_row: usize,
        jobs: &mut [(J, &mut [f32])],
        rows: &R,
        f: &F,
    ) -> bool
    where
        J: Sync,
        R: Fn(&J) -> usize + Sync,
        F: Fn(&J, Range<usize>, &mut [f32]) + Sync,
    {
        let total: usize =
            jobs.iter().map(|(data, _)| rows(data).next_multiple_of(ROW_ALIGN)).sum();
        if super::chunk_items(total, work_per_row, ROW_ALIGN, super::threads()).is_none() {
            return false;
        }
        let mut outs = [Out(core::ptr::null_mut()); MAX_JOBS];
        for (o, (data, out)) in outs.iter_mut().zip(jobs.iter_mut()) {
            *o = Out(out[..n * rows(data)].as_mut_ptr());
        }
        let jobs = &*jobs;
        super::split(total, work_per_row, ROW_ALIGN, (), &|chunk: Range<usize>, ()| {
            let mut first = 0;
            for ((data, _), out) in jobs.iter().zip(&outs) {
                let rows = rows(data);
                let (start, end) = (
                    chunk.start.max(first) - first,
                    chunk.end.min(first + rows).saturating_sub(first),
                );
                first += rows.next_multiple_of(ROW_ALIGN);
                if start >= end {
                    continue;
                }
                let (range, len) = (start..end, end - start);
                if n == 1 {
                    // SAFETY: rows `range` of this job's output are written by this chunk only.
                    f(data, range, unsafe { core::slice::from_raw_parts_mut(out.at(start), len) });
                    continue;
                }
                // Taken out of the cell, so a nested use on this thread would start its own buffer.
                let mut part = PART.take();
                part.resize(n * len, 0.0);
                f(data, range, &mut part);
                for j in 0..n {
                    let src = &part[j * len..(j + 1) * len];
                    // SAFETY: the output holds n * rows floats; row `start + i` of input `j` is
                    // written by this chunk only.
                    unsafe {
                        core::ptr::copy_nonoverlapping(src.as_ptr(), out.at(j * rows + start), len)
                    };
                }
                PART.set(part);
            }
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_products_stay_on_one_thread() {
        assert_eq!(chunk_items(4, 3072, ROW_ALIGN, 8), None);
        assert_eq!(chunk_items(2048, 16, ROW_ALIGN, 8), None);
        assert_eq!(chunk_items(16384, 768, ROW_ALIGN, 1), None);
    }

    #[test]
    fn chunks_cover_the_rows_in_aligned_steps_one_per_thread() {
        let per = chunk_items(16384, 768, ROW_ALIGN, 2).unwrap();
        assert_eq!(per, 8192);
        let per = chunk_items(1000, 1 << 16, ROW_ALIGN, 3).unwrap();
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

    /// Several products split as one run: every (job, input, row) lands where that job's own
    /// product puts it, whatever the jobs' sizes (some smaller than a row block) and their count
    /// (more than one batch).
    #[test]
    fn every_row_of_every_job_lands_in_place() {
        let sizes = [5, 40, 3, 16, 1, 33, 7, 2, 70, 9];
        for n in [1, 3] {
            let mut outs: Vec<Vec<f32>> = sizes.iter().map(|&r| vec![0.0; n * r]).collect();
            let mut jobs: Vec<(usize, &mut [f32])> = sizes
                .iter()
                .copied()
                .enumerate()
                .zip(outs.iter_mut())
                .map(|((k, _), o)| (k, &mut o[..]))
                .collect();
            rows_each(
                n,
                1 << 20,
                &mut jobs,
                |&k| sizes[k],
                |&k, range, part| {
                    let len = range.len();
                    for j in 0..n {
                        for (i, r) in range.clone().enumerate() {
                            part[j * len + i] = (k * 1_000_000 + j * 10_000 + r) as f32;
                        }
                    }
                },
            );
            for (k, out) in outs.iter().enumerate() {
                for j in 0..n {
                    for r in 0..sizes[k] {
                        assert_eq!(
                            out[j * sizes[k] + r],
                            (k * 1_000_000 + j * 10_000 + r) as f32,
                            "job {k} input {j} row {r}"
                        );
                    }
                }
            }
        }
    }

    /// Each chunk gets exactly its items' parts of every slice, whatever the split.
    #[test]
    fn every_item_gets_its_own_parts() {
        let n = 13;
        let (mut a, mut b, mut c) = (vec![0u32; 3 * n], vec![0u32; 2 * n], vec![0u32; n]);
        items(
            n,
            1 << 20,
            (PerItem(&mut a, 3), PerItem(&mut b, 2), PerItem(&mut c, 1)),
            |range, (a, b, c)| {
                assert_eq!(
                    (a.0.len(), b.0.len(), c.0.len()),
                    (3 * range.len(), 2 * range.len(), range.len())
                );
                for (i, item) in range.enumerate() {
                    a.0[3 * i..3 * i + 3].fill(item as u32);
                    b.0[2 * i..2 * i + 2].fill(item as u32);
                    c.0[i] = item as u32;
                }
            },
        );
        for item in 0..n {
            assert!(a[3 * item..3 * item + 3]
                .iter()
                .chain(&b[2 * item..2 * item + 2])
                .all(|&v| v == item as u32));
            assert_eq!(c[item], item as u32);
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
        let norms: Vec<u8> =
            (0..rows * cols / group).flat_map(|i| [(i * 7) as u8, 0x38 + (i % 5) as u8]).collect();
        let levels = pseudo_random(16, 2);
        let m =
            CqMatrix::from_parts(rows, cols, group, CqWidth::B4, &packed, &norms, &levels).unwrap();
        for n in [1, 5, 17] {
            let xr = pseudo_random(n * cols, n as u32);
            let mut whole = vec![0.0f32; n * rows];
            m.matmul_rotated(&xr, n, &mut whole);
            let mut part = vec![0.0f32; n * 8];
            for start in (0..rows).step_by(8) {
                m.row_block(start, 8).unwrap().matmul_rotated(&xr, n, &mut part);
                for j in 0..n {
                    assert_eq!(
                        whole[j * rows + start..][..8],
                        part[j * 8..][..8],
                        "n {n} rows {start}.."
                    );
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
