//! Needle 2 probe heads (upstream 2.0.15 `ContrastiveHead`, `ConfidenceHead` over
//! `probe_pool`). Every hidden cell of the sequence — each token's scaled embedding and its
//! lane mean after every block — competes in one softmax per probe:
//!
//! ```text
//! pooled_p = Σ_{t,l} softmax_{t,l}(cell_{t,l} · probe_p / sqrt(d)) cell_{t,l}
//! out      = proj · [pooled_1 | … | pooled_P]       contrastive: then L2-normalised
//!                                                     confidence: + bias (one logit)
//! ```
//!
//! The softmax is streamed (one [`SoftmaxPool`] slot per probe), so a head holds `P · d`
//! floats however many layers and positions feed it.
use alloc::vec;
use alloc::vec::Vec;

use crate::blocks::pool::{unit_length, Probe, ProbePool};
use crate::blocks::tensors::{floats, HeadMatrix};
use crate::container::{Codebooks, V2HeadKind, V2ProbeHead};
use crate::{Error, Result};

/// One head's weights (all FP16 in the container).
pub struct ProbeHead<'a> {
    pub(crate) kind: V2HeadKind,
    /// `(P, d)`.
    probes: HeadMatrix<'a>,
    /// `(out, P * d)`.
    proj: HeadMatrix<'a>,
    bias: Vec<f32>,
    p: usize,
    out: usize,
}

impl<'a> ProbeHead<'a> {
    pub(crate) fn new(t: &V2ProbeHead<'a>, cbs: &Codebooks, d: usize) -> Result<Self> {
        let (p, out) = (t.num_probes as usize, t.out_dim as usize);
        if p == 0 || out == 0 {
            return Err(Error::BadTensor {
                index: t.probes.index,
                field: "shape",
                reason: "a head needs probes and outputs",
            });
        }
        Ok(Self {
            kind: t.kind,
            probes: HeadMatrix::new(&t.probes, cbs, p, d)?,
            proj: HeadMatrix::new(&t.proj, cbs, out, p * d)?,
            bias: floats(&t.bias, out)?,
            p,
            out,
        })
    }

    /// A pool for this head over cells `d` wide: one softmax slot per probe.
    pub(crate) fn new_pool(&self, d: usize) -> ProbePool {
        ProbePool::new(self.p, d, self.p, self.probes.rotation_len())
    }

    /// The head's output from its streamed pool.
    pub(crate) fn readout(&self, pool: &ProbePool, d: usize) -> Result<Vec<f32>> {
        let mut pooled = vec![0.0f32; self.p * d];
        for (slot, dst) in pooled.chunks_exact_mut(d).enumerate() {
            pool.cells.mean(slot, dst)?;
        }
        let mut out = vec![0.0f32; self.out];
        let mut rot = vec![0.0f32; self.proj.rotation_len()];
        self.proj.matvec(&pooled, &mut rot, &mut out);
        match self.kind {
            // Upstream's contrastive projection has no bias (the exporter writes zeros).
            V2HeadKind::Contrastive => unit_length(&mut out),
            V2HeadKind::Confidence => {
                for (v, &b) in out.iter_mut().zip(&self.bias) {
                    *v += b;
                }
            }
        }
        Ok(out)
    }
}

impl Probe for ProbeHead<'_> {
    type Pool = ProbePool;
    type Kind = V2HeadKind;

    fn kind(&self) -> V2HeadKind {
        self.kind
    }

    /// Every row joins the same softmax of each probe.
    fn pool(&self, pool: &mut ProbePool, _row: usize, cell: &[f32]) {
        pool.add(&self.probes, 0, cell);
    }
}
