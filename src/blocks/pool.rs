//! Softmax-weighted means over a stream of cells, without storing the cells: the probe heads of
//! both generations pool `Σ_c softmax_c(score_c) · cell_c` over every hidden cell of a sequence.
//!
//! Each slot keeps a running maximum score, the running sum of `e^(score - max)` and the running
//! weighted sum of cells; a new maximum rescales what was pooled so far. Memory does not grow
//! with the number of cells, and the mean can be read after any of them.
use alloc::vec;
use alloc::vec::Vec;

use super::persist::{Reader, Writer};
use super::tensors::HeadMatrix;
use crate::kernels::{axpy, dot};
use crate::{Error, Result};

#[derive(Clone)]
pub(crate) struct SoftmaxPool {
    max: Vec<f32>,
    sum: Vec<f32>,
    acc: Vec<f32>,
    d: usize,
}

impl SoftmaxPool {
    /// `slots` independent pools over cells of `d` floats.
    pub(crate) fn new(slots: usize, d: usize) -> Self {
        Self {
            max: vec![f32::NEG_INFINITY; slots],
            sum: vec![0.0; slots],
            acc: vec![0.0; slots * d],
            d,
        }
    }

    /// Bytes the pool holds.
    pub(crate) fn bytes(&self) -> usize {
        4 * (self.max.len() + self.sum.len() + self.acc.len())
    }

    /// Forgets every pooled cell.
    pub(crate) fn clear(&mut self) {
        self.max.fill(f32::NEG_INFINITY);
        self.sum.fill(0.0);
        self.acc.fill(0.0);
    }

    pub(crate) fn save(&self, w: &mut Writer) {
        w.f32s(&self.max);
        w.f32s(&self.sum);
        w.f32s(&self.acc);
    }

    pub(crate) fn load(&mut self, r: &mut Reader<'_>) -> Result<()> {
        r.f32s(&mut self.max)?;
        r.f32s(&mut self.sum)?;
        r.f32s(&mut self.acc)
    }

    /// Adds `cell` with softmax logit `score` to pool `slot`.
    pub(crate) fn add(&mut self, slot: usize, score: f32, cell: &[f32]) {
        let acc = &mut self.acc[slot * self.d..(slot + 1) * self.d];
        if score > self.max[slot] {
            // Rescale what was pooled so far to the new maximum.
            let f = libm::expf(self.max[slot] - score);
            self.sum[slot] = self.sum[slot] * f + 1.0;
            for (a, &c) in acc.iter_mut().zip(cell) {
                *a = *a * f + c;
            }
            self.max[slot] = score;
        } else {
            let w = libm::expf(score - self.max[slot]);
            self.sum[slot] += w;
            axpy(w, cell, acc);
        }
    }

    /// The softmax-weighted mean of pool `slot` into `out` (`d` floats).
    pub(crate) fn mean(&self, slot: usize, out: &mut [f32]) -> Result<()> {
        if self.sum[slot] <= 0.0 {
            return Err(Error::InvalidArgument { name: "state", reason: "no tokens pooled yet" });
        }
        let inv = 1.0 / self.sum[slot];
        for (o, &a) in out.iter_mut().zip(&self.acc[slot * self.d..(slot + 1) * self.d]) {
            *o = a * inv;
        }
        Ok(())
    }
}

/// A probe head's pool as the state handles it.
pub trait HeadPool: Clone {
    /// Forgets what was pooled.
    fn clear(&mut self);
    fn bytes(&self) -> usize;
    fn save(&self, w: &mut Writer);
    fn load(&mut self, r: &mut Reader<'_>) -> Result<()>;
}

/// A probe head's streamed pool, the same in both generations: its softmax slots (one per probe,
/// Needle 3: per row and probe) and the buffers of one cell's scores.
#[derive(Clone)]
pub struct ProbePool {
    pub(crate) cells: SoftmaxPool,
    /// One cell's score under each probe of a row.
    pub(crate) scores: Vec<f32>,
    /// The probe matrix's rotated input.
    pub(crate) rot: Vec<f32>,
}

impl ProbePool {
    /// `slots` softmax slots of `d` floats, `probes` scores per cell, a rotation of `rot` floats.
    pub(crate) fn new(slots: usize, d: usize, probes: usize, rot: usize) -> Self {
        Self { cells: SoftmaxPool::new(slots, d), scores: vec![0.0; probes], rot: vec![0.0; rot] }
    }

    /// Scores `cell` under each probe of `probes` (scaled by `1/sqrt(d)`) and adds it to the
    /// slots from `first` on, one per probe.
    pub(crate) fn add(&mut self, probes: &HeadMatrix<'_>, first: usize, cell: &[f32]) {
        probes.matvec(cell, &mut self.rot, &mut self.scores);
        let root_d = libm::sqrtf(cell.len() as f32);
        for (p, &s) in self.scores.iter().enumerate() {
            self.cells.add(first + p, s / root_d, cell);
        }
    }
}

impl HeadPool for ProbePool {
    /// Bytes the pool holds.
    fn bytes(&self) -> usize {
        self.cells.bytes() + 4 * (self.scores.len() + self.rot.len())
    }

    /// Forgets every pooled cell.
    fn clear(&mut self) {
        self.cells.clear();
    }

    fn save(&self, w: &mut Writer) {
        self.cells.save(w);
        w.f32s(&self.scores);
        w.f32s(&self.rot);
    }

    fn load(&mut self, r: &mut Reader<'_>) -> Result<()> {
        self.cells.load(r)?;
        r.f32s(&mut self.scores)?;
        r.f32s(&mut self.rot)
    }
}

/// A probe head: turns hidden cells into updates of its per-sequence pool.
pub trait Probe {
    type Pool;
    /// What the head answers (its container record's kind).
    type Kind: Copy + PartialEq;
    fn kind(&self) -> Self::Kind;
    /// Pools one token's cell of `row` (0 = the scaled embedding, `l + 1` = the lane mean
    /// after block `l`).
    fn pool(&self, pool: &mut Self::Pool, row: usize, cell: &[f32]);
}

/// A model's probe heads paired with a state's pools (empty when the state does not track
/// heads): what the stack shows its hidden cells to.
pub(crate) struct Tracked<'h, H: Probe> {
    pub(crate) heads: &'h [H],
    pub(crate) pools: &'h mut [H::Pool],
}

impl<H: Probe> Tracked<'_, H> {
    /// Whether anything pools (the lane means are skipped otherwise).
    pub(crate) fn listening(&self) -> bool {
        !self.pools.is_empty()
    }

    pub(crate) fn add(&mut self, row: usize, cell: &[f32]) {
        for (head, pool) in self.heads.iter().zip(self.pools.iter_mut()) {
            head.pool(pool, row, cell);
        }
    }
}

/// Scales `x` to unit length as upstream's embedding heads do: `x / sqrt(Σ x² + 1e-12)`.
pub(crate) fn unit_length(x: &mut [f32]) {
    let norm = libm::sqrtf(dot(x, x) + 1e-12);
    for v in x.iter_mut() {
        *v /= norm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_mean_equals_the_softmax_weighted_mean_in_any_order() {
        let cells = [[1.0f32, 0.0], [0.0, 2.0], [3.0, -1.0], [0.5, 0.5]];
        let scores = [0.3f32, 2.0, -1.0, 1.5];
        let total: f64 = scores.iter().map(|&s| f64::from(s).exp()).sum();
        let want: Vec<f64> = (0..2)
            .map(|k| {
                cells
                    .iter()
                    .zip(&scores)
                    .map(|(c, &s)| f64::from(s).exp() / total * f64::from(c[k]))
                    .sum()
            })
            .collect();
        for order in [[0usize, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
            let mut pool = SoftmaxPool::new(1, 2);
            for i in order {
                pool.add(0, scores[i], &cells[i]);
            }
            let mut got = [0.0f32; 2];
            pool.mean(0, &mut got).unwrap();
            for k in 0..2 {
                assert!(
                    (f64::from(got[k]) - want[k]).abs() < 1e-6,
                    "{order:?}: {got:?} vs {want:?}"
                );
            }
        }
    }

    #[test]
    fn an_empty_or_cleared_pool_has_no_mean() {
        let mut pool = SoftmaxPool::new(2, 3);
        assert!(pool.mean(1, &mut [0.0; 3]).is_err());
        pool.add(1, 0.5, &[1.0, 2.0, 3.0]);
        let mut got = [0.0f32; 3];
        pool.mean(1, &mut got).unwrap();
        assert_eq!(got, [1.0, 2.0, 3.0]);
        pool.clear();
        assert!(pool.mean(1, &mut got).is_err());
        assert_eq!(pool.bytes(), 4 * (2 + 2 + 6));
    }

    #[test]
    fn unit_length_vectors_have_norm_one() {
        let mut x = [3.0f32, -4.0];
        unit_length(&mut x);
        assert_eq!(x, [0.6, -0.8]);
    }
}
