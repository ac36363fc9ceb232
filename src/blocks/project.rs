//! Applying a layer's CQ matrices to a chunk of tokens: each input rotated once per run of
//! matrices that share its column geometry, then every matrix of the run applied to the whole
//! chunk (one code decode per chunk). In deploy numerics an A8 input is rounded to int8 first
//! (upstream's `_aq`) and the products run on its int8 codes ([`A8Inputs`]).
use alloc::vec;
use alloc::vec::Vec;

use super::a8::A8Inputs;
use crate::kernels::parallel::{self, PerItem};
use crate::kernels::CqMatrix;

/// A matrix and the rows (one per token of the chunk) its products land in.
pub(crate) type Job<'j, 'a> = (&'j CqMatrix<'a>, &'j mut [f32]);

/// The buffers of a chunk's projections: rotated f32 inputs, and in deploy numerics the A8
/// inputs' rotated codes.
pub(crate) struct Projector {
    rot: Vec<f32>,
    a8: Option<A8Inputs>,
}

impl Projector {
    /// Room for `b` inputs of up to `cols_padded` columns; `deploy` rounds A8 inputs.
    pub(crate) fn new(b: usize, cols_padded: usize, deploy: bool) -> Self {
        Self { rot: vec![0.0; b * cols_padded], a8: deploy.then(|| A8Inputs::new(b, cols_padded)) }
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * self.rot.len() + self.a8.as_ref().map_or(0, A8Inputs::bytes)
    }

    /// `out = m · x` for each job, `x` being an A8 point (rounded to int8 in deploy numerics).
    pub(crate) fn a8(&mut self, x: &[f32], b: usize, jobs: &mut [Job<'_, '_>]) {
        match &mut self.a8 {
            Some(a8) => a8.project(x, b, &mut self.rot, jobs),
            None => self.f32(x, b, jobs),
        }
    }

    /// [`Self::a8`] where `rounded`, else [`Self::f32`] (the mHC input is an A8 point in
    /// Needle 3 only).
    pub(crate) fn a8_if(&mut self, rounded: bool, x: &[f32], b: usize, jobs: &mut [Job<'_, '_>]) {
        if rounded {
            self.a8(x, b, jobs)
        } else {
            self.f32(x, b, jobs)
        }
    }

    /// `out = m · x` for each job, in f32 whatever the numerics.
    pub(crate) fn f32(&mut self, x: &[f32], b: usize, jobs: &mut [Job<'_, '_>]) {
        project(x, b, &mut self.rot, jobs)
    }
}

/// Applies each matrix of `jobs` to the `b` rows of `x` (row width = the matrices' `cols`),
/// rotating the inputs once for each run of consecutive matrices that share their column
/// geometry, and applying a run's matrices together (one split across threads for all of them).
fn project(x: &[f32], b: usize, rot: &mut [f32], mut jobs: &mut [Job<'_, '_>]) {
    while let Some((m, _)) = jobs.first() {
        let (cols, cp, group) = (m.cols(), m.cols_padded(), m.group());
        let run = jobs.iter().take_while(|(o, _)| (o.cols(), o.group()) == (cols, group)).count();
        // One transform per group of each input, log2(group) additions per element.
        let work = cp * group.ilog2() as usize;
        parallel::items(b, work, PerItem(&mut rot[..b * cp], cp), |inputs, rot| {
            for (j, r) in inputs.zip(rot.0.chunks_exact_mut(cp)) {
                m.rotate_input(&x[j * cols..(j + 1) * cols], r);
            }
        });
        let (now, rest) = core::mem::take(&mut jobs).split_at_mut(run);
        CqMatrix::matmul_rotated_each(&rot[..b * cp], b, now);
        jobs = rest;
    }
}
