//! Everything one Needle 2 sequence needs: the shared [`state::State`] (KV rings that grow with
//! the sequence, Engram tails, chunk scratch, the streamed head pools) over Needle 2's types,
//! how one is made, and its switchable attention window.
//!
//! [`Needle2`] is the generation the shared model and state are instantiated with: this file
//! names both ([`Model`], [`State`]).
use alloc::vec::Vec;

use super::geometry::Window;
use super::heads::{Pool, ProbeHead};
use super::mlp::WalshMlp;
use super::{KvPrecision, Numerics};
use crate::blocks::model;
use crate::blocks::state::{self, Generation};
use crate::Result;

/// How a state runs its model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// KV-cache storage. Upstream's Needle 2 keeps keys and values in f32 (its `kv_bits = 8`
    /// means no rounding); int8 quarters the cache at a small cost in accuracy.
    pub kv: KvPrecision,
    pub numerics: Numerics,
    /// Session capacity in tokens (at most the model's `max_seq_len`).
    pub max_tokens: usize,
    /// Attention window: the keys each token sees, itself included (0 = every earlier
    /// position). The KV rings hold this many positions (or `max_tokens` when fewer or 0).
    pub window: usize,
    /// Tokens [`Model::prefill`] pushes through each weight matrix at once.
    pub prefill_chunk: usize,
    /// Pool hidden cells for the probe heads while running (see [`Model::head`]).
    pub track_heads: bool,
}

/// Needle 2 as the shared [`state::State`] sees it.
pub enum Needle2 {}

impl Generation for Needle2 {
    type Attention = Window;
    const A8_MIXING: bool = false;
    type Options = Options;
    type Mlp = WalshMlp;
    type Head<'a> = ProbeHead<'a>;
    type Pool = Pool;
}

/// A Needle 2 model over the bytes of its container (built in `model.rs`).
pub type Model<'a> = model::Model<'a, Needle2>;

/// The sequence state of one [`Model`].
pub type State = state::State<Needle2>;

impl State {
    pub(crate) fn new(model: &Model<'_>, options: &Options) -> Result<Self> {
        let g = &model.geometry;
        Self::check_capacity(options.max_tokens, g.max_seq_len)?;
        let plan = g.plan(options.window, g.kv_slots(options.window, options.max_tokens));
        let deploy = options.numerics == Numerics::Deploy;
        let seq = model.stack.sequence(
            plan,
            options.kv,
            options.max_tokens,
            options.prefill_chunk,
            deploy,
        )?;
        let pools = if options.track_heads {
            model.heads.iter().map(|h| Pool::new(h, g.d_model)).collect()
        } else {
            Vec::new()
        };
        Ok(Self { geometry: g.clone(), options: *options, seq, pools })
    }

    /// The attention window the state runs (0 = full causal).
    pub fn window(&self) -> usize {
        self.options.window
    }

    /// Whether every token so far has attended to all earlier ones, so that logits and head
    /// outputs equal upstream's full-causal ones (`generate_cached`'s and the heads' default).
    pub fn is_full_causal(&self) -> bool {
        self.options.window == 0 || self.seq.pos <= self.options.window
    }

    /// Switches the attention window (0 = full causal) and forgets the sequence. A window
    /// wider than the KV rings this state allocated is refused (`InvalidArgument`), the state
    /// unchanged.
    pub fn set_window(&mut self, window: usize) -> Result<()> {
        let old: Vec<_> = self.seq.plan.iter().map(|p| p.window).collect();
        for p in &mut self.seq.plan {
            p.window = (window != 0).then_some(window);
        }
        if let Err(e) = self.seq.check_windows() {
            for (p, w) in self.seq.plan.iter_mut().zip(old) {
                p.window = w;
            }
            return Err(e);
        }
        self.options.window = window;
        self.reset();
        Ok(())
    }

    /// Bytes of the whole per-sequence state: KV rings, Engram tails, chunk scratch, head pools.
    pub fn bytes(&self) -> usize {
        self.seq.kv_bytes()
            + self.seq.scratch_bytes()
            + 4 * self.seq.mlp.iter().map(Vec::len).sum::<usize>()
            + self.head_pool_bytes()
    }
}
