//! How a Needle 3 [`Model`] (the shared model over [`Needle3`](super::Needle3)) is built from its
//! container; its default options, depth rungs and its probe heads' readout.
use alloc::vec::Vec;

use super::geometry::Geometry;
use super::heads::ProbeHead;
use super::ladder::ladder_layer_indices;
use super::mlp::{HadamardMlp, Permutations};
use super::state::{Model, Options, State};
use super::{KvPrecision, Numerics};
use crate::blocks::attention::{Attention, AttnTensors, Heads};
use crate::blocks::engram::Site;
use crate::blocks::mhc;
use crate::blocks::sigmoid;
use crate::blocks::stack::{Layer, Stack};
use crate::blocks::tensors::{cq, floats, gain};
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
        let cbs = &c.codebooks;
        let d = g.d_model;
        if c.layers.len() != g.num_layers || c.engram.len() != g.engram_sites.len() {
            return Err(Error::BadHeader {
                field: "num_layers",
                value: c.layers.len() as u64,
                reason: "tensors disagree with the header",
            });
        }
        let embedding = cq(&c.embedding, cbs, g.vocab, d)?;
        let mut mhc = mhc::load(&c.mhc, cbs, g.num_layers, g.mhc_lanes, d)?.into_iter();
        let heads = Heads::new(g.num_heads, g.num_kv_heads, g.qk_head_dim, g.v_head_dim);
        let mut layers = Vec::with_capacity(g.num_layers);
        for (i, l) in c.layers.iter().enumerate() {
            let conv = match (&l.q_taps, &l.k_taps, &l.v_taps) {
                (Some(q), Some(k), Some(v)) => Some((g.attention.qkv_conv_taps, [q, k, v])),
                _ => None,
            };
            let attn = AttnTensors {
                q_proj: &l.q_proj,
                k_proj: &l.k_proj,
                v_proj: &l.v_proj,
                gate_proj: &l.gate_proj,
                out_proj: &l.out_proj,
                q_norm: &l.q_norm,
                k_norm: &l.k_norm,
                conv,
            };
            layers.push(Layer {
                norm_in: gain(&l.norm_in, d)?,
                post_norm: gain(&l.post_norm, d)?,
                pre_hada: gain(&l.pre_hada, d)?,
                attn: Attention::new(&attn, &heads, d, cbs)?,
                attn_gate: sigmoid(floats(&l.attn_gate, 1)?[0]),
                mlp: HadamardMlp::new(l, d, g.hada_n)?,
                mhc: mhc.next().ok_or(Error::BadHeader {
                    field: "num_layers",
                    value: i as u64,
                    reason: "missing mHC rows",
                })?,
            });
        }
        let engram = g.engram.clone();
        let sites = c
            .engram
            .iter()
            .zip(&g.engram_sites)
            .map(|(s, &layer)| Site::new(s, layer, &engram, cbs))
            .collect::<Result<_>>()?;
        let probe_heads = c
            .heads
            .iter()
            .map(|h| ProbeHead::new(h, cbs, g.num_layers + 1, d))
            .collect::<Result<_>>()?;
        let stack = Stack {
            d_model: d,
            lanes: g.mhc_lanes,
            vocab: g.vocab,
            rope_theta: g.rope_theta,
            lm_head: embedding.row_block(0, g.logits_vocab)?,
            embedding,
            embed_scale: libm::sqrt(d as f64) as f32,
            layers,
            sites,
            engram,
            final_norm: gain(&c.final_norm, d)?,
            mlp_shared: Permutations {
                p1: permutation(&c.hada_p1, g.hada_n)?,
                p2: permutation(&c.hada_p2, g.hada_n)?,
            },
            heads,
            pad_id: c.tokenizer_summary.pad,
            a8_mixing: true,
        };
        Ok(Self { geometry: g, stack, heads: probe_heads })
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
        State::new(self, options)
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
