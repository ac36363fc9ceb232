//! How a Needle 2 [`Model`] (the shared model over [`Needle2`](super::Needle2)) is built from its
//! container; its default options and its probe heads' readout.
use alloc::vec::Vec;

use super::geometry::Geometry;
use super::heads::ProbeHead;
use super::mlp::WalshMlp;
use super::state::{Model, Options, State};
use super::{HeadKind, KvPrecision, Numerics};
use crate::blocks::attention::{Attention, AttnTensors, Heads};
use crate::blocks::engram::Site;
use crate::blocks::mhc;
use crate::blocks::sigmoid;
use crate::blocks::stack::{Layer, Stack};
use crate::blocks::tensors::{cq, floats, gain};
use crate::container::V2Container;
use crate::{Error, Result};

impl<'a> Model<'a> {
    /// Builds the model over a parsed container (which it borrows from, zero-copy).
    pub fn new(c: &V2Container<'a>) -> Result<Self> {
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
            let attn = AttnTensors {
                q_proj: &l.q_proj,
                k_proj: &l.k_proj,
                v_proj: &l.v_proj,
                gate_proj: &l.gate_proj,
                out_proj: &l.out_proj,
                q_norm: &l.q_norm,
                k_norm: &l.k_norm,
                conv: None,
            };
            layers.push(Layer {
                norm_in: gain(&l.norm_in, d)?,
                post_norm: gain(&l.post_norm, d)?,
                pre_hada: gain(&l.pre_hada, d)?,
                attn: Attention::new(&attn, &heads, d, cbs)?,
                attn_gate: sigmoid(floats(&l.attn_gate, 1)?[0]),
                mlp: WalshMlp::new(l, g.hada_n)?,
                mhc: mhc.next().ok_or(Error::BadHeader {
                    field: "num_layers",
                    value: i as u64,
                    reason: "missing mHC rows",
                })?,
            });
        }
        // As upstream's incremental decoder (`_forward_cached`) does, a layer takes the first
        // site listed for it; a repeated layer's later sites are not run.
        let engram = g.engram.clone();
        let mut sites = Vec::with_capacity(c.engram.len());
        for (i, (s, &layer)) in c.engram.iter().zip(&g.engram_sites).enumerate() {
            if !g.engram_sites[..i].contains(&layer) {
                sites.push(Site::new(s, layer, &engram, cbs)?);
            }
        }
        let probe_heads =
            c.heads.iter().map(|h| ProbeHead::new(h, cbs, d)).collect::<Result<_>>()?;
        let stack = Stack {
            d_model: d,
            lanes: g.mhc_lanes,
            vocab: g.vocab,
            rope_theta: g.rope_theta,
            lm_head: embedding,
            embedding,
            embed_scale: libm::sqrt(d as f64) as f32,
            layers,
            sites,
            engram,
            final_norm: gain(&c.final_norm, d)?,
            mlp_shared: (),
            heads,
            pad_id: c.tokenizer_summary.pad,
            a8_mixing: false,
        };
        Ok(Self { geometry: g, stack, heads: probe_heads })
    }

    /// The whole context, exact numerics, the header's attention window, f32 KV.
    pub fn default_options(&self) -> Options {
        Options {
            kv: KvPrecision::F32,
            numerics: Numerics::Exact,
            max_tokens: self.geometry.max_seq_len,
            window: self.geometry.attention.kv_window,
            prefill_chunk: 16,
            track_heads: false,
        }
    }

    /// KV-cache bytes of a session of `session_len` tokens with attention window `window`.
    pub fn kv_bytes(&self, session_len: usize, kv: KvPrecision, window: usize) -> usize {
        self.geometry.kv_bytes(window, session_len, kv)
    }

    /// A fresh sequence state.
    pub fn new_state(&self, options: &Options) -> Result<State> {
        State::new(self, options)
    }

    /// A probe head's output over every token the state has consumed, under the state's
    /// window (contrastive: unit vector; confidence: one logit). It equals upstream's
    /// `encode_contrastive` / `forward_confidence` (window 0) while
    /// [`State::is_full_causal`] holds. Needs a state made with `track_heads`.
    pub fn head(&self, state: &State, kind: HeadKind) -> Result<Vec<f32>> {
        let (head, pool) = self.tracked(state, kind)?;
        head.readout(pool, self.geometry.d_model)
    }
}
