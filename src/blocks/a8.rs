//! Projections of A8 inputs in deploy numerics: where upstream rounds a vector to int8 before
//! its matrices (`_aq`), its int8 codes are rotated exactly in integers once and every matrix
//! applied to them ([`crate::kernels::cq_a8`]: the integer kernel where it pays, the f32 kernels
//! on the rotated codes elsewhere).
use alloc::vec;
use alloc::vec::Vec;

use crate::kernels::parallel::{self, PerItem};
use crate::kernels::{rotate_a8, CqMatrix};

/// The rotated int8 codes and scales of a chunk's A8 inputs.
pub(crate) struct A8Inputs {
    /// `cols_padded` rotated codes per input.
    y: Vec<i32>,
    scales: Vec<f32>,
}

impl A8Inputs {
    /// Room for `b` inputs of up to `cols_padded` rotated codes each.
    pub(crate) fn new(b: usize, cols_padded: usize) -> Self {
        A8Inputs { y: vec![0; b * cols_padded], scales: vec![0.0; b] }
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * (self.y.len() + self.scales.len())
    }

    /// Applies each matrix of `jobs` to the int8 round trip of the `b` rows of `x` (row width =
    /// the matrices' `cols`), quantising and rotating once for consecutive matrices that share
    /// their column geometry; `rot` is scratch for the widths that run the f32 kernels.
    pub(crate) fn project(
        &mut self,
        x: &[f32],
        b: usize,
        rot: &mut [f32],
        jobs: &mut [(&CqMatrix<'_>, &mut [f32])],
    ) {
        let mut rotated = None;
        for (m, out) in jobs.iter_mut() {
            let (cols, cp) = (m.cols(), m.cols_padded());
            if rotated != Some((cols, m.group())) {
                // Each input on its own (split across threads): a quantisation pass and one
                // transform per group, log2(group) additions per element.
                let parts = (PerItem(&mut self.y[..b * cp], cp), PerItem(&mut self.scales[..b], 1));
                parallel::items(
                    b,
                    cp * (m.group().ilog2() as usize + 4),
                    parts,
                    |inputs, (y, scales)| {
                        for ((j, y), scale) in
                            inputs.zip(y.0.chunks_exact_mut(cp)).zip(scales.0.iter_mut())
                        {
                            *scale = rotate_a8(m, &x[j * cols..(j + 1) * cols], y);
                        }
                    },
                );
                rotated = Some((cols, m.group()));
            }
            m.matmul_a8(&self.y[..b * cp], &self.scales[..b], b, rot, &mut out[..b * m.rows()]);
        }
    }
}
