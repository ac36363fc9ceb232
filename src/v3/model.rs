//! How a Needle 3 [`Model`] (the shared model over [`Needle3`](super::Needle3)) is built from its
//! container; its default options, depth rungs and its probe heads' readout.
use alloc::vec::Vec;

use super::geometry::Geometry;
use super::heads::ProbeHead;
use super::ladder::ladder_layer_indices;
use super::mlp::{HadamardMlp, Permutations};
use super::state::{Model, Options, State};
use super::{KvPrecision, Numerics};
use crate::blocks::build::{block_views, views, Own};
use crate::blocks::tensors::floats;
use crate::container::{HeadKind, TensorView, V3Container};
use crate::{Error, Result};

/// A permutation of `0..n` stored as f32 (`hada_p1`, `hada_p2`).
fn permutation(view: &TensorView<'_>, n: usize) -> Result<Vec<u32>> {
    let values = floats(view, n)?;
    let mut seen = alloc::vec![false; n];
    let mut out = Vec::with_capacity(n);
    for v in values {
        // `as` saturates (NaN -> 0), so the round trip rejects fractions, NaN and negatives.
        let i = v as usize;
        if i as f32 != v || i >= n || seen[i] {
            return Err(Error::BadTensor {
                index: view.index,
                field: "data",
                reason: "not a permutation of 0..hada_n",
            });
        }
        seen[i] = true;
        out.push(i as u32);
    }
    Ok(out)
}

impl<'a> Model<'a> {
    /// Builds the model over a parsed container (which it borrows from, zero-copy).
    pub fn new(c: &V3Container<'a>) -> Result<Self> {
        let g = Geometry::from_header(&c.header)?;
        let (cbs, d) = (&c.codebooks, g.d_model);
        let (taps, n) = (g.attention.qkv_conv_taps, g.hada_n);
        let blocks = c.layers.iter().map(move |l| {
            let conv = match (&l.q_taps, &l.k_taps, &l.v_taps) {
                (Some(q), Some(k), Some(v)) => Some((taps, [q, k, v])),
                _ => None,
            };
            Ok((block_views!(l, conv), HadamardMlp::new(l, d, n)?))
        });
        let rows = g.num_layers + 1;
        // A plain loop: collecting into a `Result` brings a copy of core's `GenericShunt`.
        let mut heads = Vec::new();
        for h in &c.heads {
            heads.push(ProbeHead::new(h, cbs, rows, d)?);
        }
        let mlp_shared = Permutations {
            p1: permutation(&c.hada_p1, g.hada_n)?,
            p2: permutation(&c.hada_p2, g.hada_n)?,
        };
        Model::build(g, views!(c), Own { blocks, heads, mlp_shared })
    }

    /// Full depth, the whole context, exact numerics, and the KV width the container asks for.
    pub fn default_options(&self) -> Options {
        Options {
            kv: if self.geometry.kv_bits == 8 { KvPrecision::Int8 } else { KvPrecision::F32 },
            numerics: Numerics::Exact,
            depth: self.geometry.num_layers,
            max_tokens: self.geometry.max_seq_len,
            prefill_chunk: 16,
            track_heads: false,
        }
    }

    /// The layers a rung of `depth` blocks runs (all of them at full depth).
    pub fn layer_indices(&self, depth: usize) -> Result<Vec<usize>> {
        if depth == self.geometry.num_layers {
            Ok((0..depth).collect())
        } else {
            ladder_layer_indices(self.geometry.num_layers, depth)
        }
    }

    /// KV-cache bytes of a session of `session_len` tokens at `depth`.
    pub fn kv_bytes(&self, session_len: usize, kv: KvPrecision, depth: usize) -> Result<usize> {
        Ok(self.geometry.kv_bytes(&self.layer_indices(depth)?, session_len, kv))
    }

    /// A fresh sequence state.
    pub fn new_state(&self, options: &Options) -> Result<State> {
        let g = &self.geometry;
        let plan = || Ok(g.plan(&self.layer_indices(options.depth)?, options.max_tokens));
        self.state_with(options, plan, |h| h.new_pool(g.num_layers + 1, g.d_model))
    }

    /// A probe head's output over every token the state has consumed (embedding: unit vector;
    /// confidence: one logit; router: three logits). Needs a state made with `track_heads`.
    pub fn head(&self, state: &State, kind: HeadKind) -> Result<Vec<f32>> {
        let (head, pool) = self.tracked(state, kind)?;
        let rows: Vec<usize> =
            core::iter::once(0).chain(state.seq.plan.iter().map(|p| p.layer + 1)).collect();
        head.readout(pool, &rows, self.geometry.d_model)
    }
}
