//! How a Needle 2 [`Model`] (the shared model over [`Needle2`](super::Needle2)) is built from its
//! container; its default options and its probe heads' readout.
use alloc::vec::Vec;

use super::geometry::Geometry;
use super::heads::ProbeHead;
use super::mlp::WalshMlp;
use super::state::{Model, Options, State};
use super::{HeadKind, KvPrecision, Numerics};
use crate::blocks::build::{block_views, views, BlockViews, Own};
use crate::container::{V2Container, V2Layer};
use crate::Result;

/// A block's views as the shared builder takes them (no conv taps) and its Walsh MLP.
fn block<'c, 'a>(l: &'c V2Layer<'a>, hada_n: usize) -> Result<(BlockViews<'c, 'a>, WalshMlp)> {
    Ok((block_views!(l, None), WalshMlp::new(l, hada_n)?))
}

impl<'a> Model<'a> {
    /// Builds the model over a parsed container (which it borrows from, zero-copy).
    pub fn new(c: &V2Container<'a>) -> Result<Self> {
        let g = Geometry::from_header(&c.header)?;
        let (cbs, d) = (&c.codebooks, g.d_model);
        let n = g.hada_n;
        let blocks = c.layers.iter().map(move |l| block(l, n));
        // A plain loop: collecting into a `Result` brings a copy of core's `GenericShunt`.
        let mut heads = Vec::new();
        for h in &c.heads {
            heads.push(ProbeHead::new(h, cbs, d)?);
        }
        Model::build(g, views!(c), Own { blocks, heads, mlp_shared: () })
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
        let g = &self.geometry;
        let slots = g.kv_slots(options.window, options.max_tokens);
        let plan = || Ok(g.plan(options.window, slots));
        self.state_with(options, plan, |h| h.new_pool(g.d_model))
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
