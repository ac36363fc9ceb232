//! Needle 3 probe heads (upstream's `ProbeHead` / `probe_pool`): small readouts over the hidden
//! "cells" of a sequence — row 0 the scaled input embedding, row `l + 1` the lane mean after
//! block `l`.
//!
//! ```text
//! r_{l,k} = Σ_t softmax_t(cell_{t,l} · probe_{l,k} / sqrt(d)) cell_{t,l}     (attention over time)
//! r_{l,k} <- rms_unit(r_{l,k}) · gain_{l,k}
//! pooled_q = Σ_{l,k} softmax_{l,k}(r_{l,k} · query_q / sqrt(d) + row_bias_{q,l,k}) r_{l,k}
//! out = proj · pooled (+ bias)          embedding: no bias, then L2-normalised
//! ```
//!
//! The time softmax is streamed (one [`SoftmaxPool`] slot per row and probe), so memory does
//! not grow with positions and the readout can be taken after any token. Rows of blocks a
//! depth rung skips are left out of the second softmax, as upstream's `row_keep` does.
use alloc::vec;
use alloc::vec::Vec;

use crate::blocks::pool::{unit_length, Probe, ProbePool};
use crate::blocks::tensors::{floats, HeadMatrix};
use crate::blocks::EPS;
use crate::container::{Codebooks, HeadKind, ProbeHeadTensors};
use crate::kernels::{axpy, rms_unit, softmax};
use crate::{Error, Result};

/// One head's weights.
pub struct ProbeHead<'a> {
    pub(crate) kind: HeadKind,
    /// Per cell row, its `k` probes.
    probes: Vec<HeadMatrix<'a>>,
    /// `(rows, k)`.
    gain: Vec<f32>,
    /// `(q, d)`.
    query: HeadMatrix<'a>,
    /// `(q, rows, k)`.
    row_bias: Vec<f32>,
    /// `(out, q * d)`.
    proj: HeadMatrix<'a>,
    bias: Vec<f32>,
    k: usize,
    q: usize,
    out: usize,
}

impl<'a> ProbeHead<'a> {
    /// `rows` = num_layers + 1.
    pub(crate) fn new(
        t: &ProbeHeadTensors<'a>,
        cbs: &Codebooks,
        rows: usize,
        d: usize,
    ) -> Result<Self> {
        let (k, q, out) = (t.num_probes as usize, t.num_queries as usize, t.out_dim as usize);
        if k == 0 || q == 0 || out == 0 {
            return Err(Error::BadTensor {
                index: t.probes.index,
                field: "shape",
                reason: "a head needs probes, queries and outputs",
            });
        }
        let all_probes = HeadMatrix::new(&t.probes, cbs, rows * k, d)?;
        Ok(Self {
            kind: t.kind,
            probes: (0..rows).map(|r| all_probes.block(r * k, k)).collect::<Result<_>>()?,
            gain: floats(&t.gain, rows * k)?,
            query: HeadMatrix::new(&t.query, cbs, q, d)?,
            row_bias: floats(&t.row_bias, q * rows * k)?,
            proj: HeadMatrix::new(&t.proj, cbs, out, q * d)?,
            bias: floats(&t.bias, out)?,
            k,
            q,
            out,
        })
    }

    /// Floats of rotated input the head's matrices need.
    pub(crate) fn rotation_len(&self) -> usize {
        let probes = self.probes.iter().map(HeadMatrix::rotation_len).max().unwrap_or(0);
        probes.max(self.query.rotation_len()).max(self.proj.rotation_len())
    }

    /// A pool for this head over `rows` rows of cells `d` wide: one softmax slot per row and
    /// probe.
    pub(crate) fn new_pool(&self, rows: usize, d: usize) -> ProbePool {
        ProbePool::new(rows * self.k, d, self.k, self.rotation_len())
    }

    /// The head's output from its streamed pool, over cell rows `rows` (ascending).
    pub(crate) fn readout(&self, pool: &ProbePool, rows: &[usize], d: usize) -> Result<Vec<f32>> {
        let m = rows.len() * self.k;
        // r_m for every kept (row, probe), row-major.
        let mut r = vec![0.0f32; m * d];
        let mut tmp = vec![0.0f32; d];
        for (i, &row) in rows.iter().enumerate() {
            for p in 0..self.k {
                let slot = row * self.k + p;
                pool.cells.mean(slot, &mut tmp)?;
                let out = &mut r[(i * self.k + p) * d..][..d];
                rms_unit(&tmp, EPS, out);
                for v in out.iter_mut() {
                    *v *= self.gain[slot];
                }
            }
        }
        // u[q, m] = r_m · query_q / sqrt(d) + row_bias[q, m]
        let root_d = libm::sqrtf(d as f32);
        let mut u = vec![0.0f32; self.q * m];
        let mut rot = vec![0.0f32; self.rotation_len()];
        let mut qs = vec![0.0f32; self.q];
        let rows_all = self.probes.len();
        for mi in 0..m {
            self.query.matvec(&r[mi * d..(mi + 1) * d], &mut rot, &mut qs);
            let (row, p) = (rows[mi / self.k], mi % self.k);
            for (qi, &s) in qs.iter().enumerate() {
                u[qi * m + mi] = s / root_d + self.row_bias[(qi * rows_all + row) * self.k + p];
            }
        }
        let mut pooled = vec![0.0f32; self.q * d];
        for (qi, w) in u.chunks_exact_mut(m).enumerate() {
            softmax(w);
            let dst = &mut pooled[qi * d..(qi + 1) * d];
            for (mi, &wi) in w.iter().enumerate() {
                axpy(wi, &r[mi * d..(mi + 1) * d], dst);
            }
        }
        let mut out = vec![0.0f32; self.out];
        self.proj.matvec(&pooled, &mut rot, &mut out);
        if self.kind == HeadKind::Embedding {
            unit_length(&mut out);
        } else {
            for (v, &b) in out.iter_mut().zip(&self.bias) {
                *v += b;
            }
        }
        Ok(out)
    }
}

impl Probe for ProbeHead<'_> {
    type Pool = ProbePool;
    type Kind = HeadKind;

    fn kind(&self) -> HeadKind {
        self.kind
    }

    /// Adds the cell to the running softmax of each of the row's probes.
    fn pool(&self, pool: &mut ProbePool, row: usize, cell: &[f32]) {
        pool.add(&self.probes[row], row * self.k, cell);
    }
}
