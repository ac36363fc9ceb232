//! Everything one Needle 3 sequence needs: the shared [`state::State`] (KV rings that grow with
//! the sequence, conv and Engram tails, chunk scratch, the streamed head pools) over Needle 3's
//! types, and how one is made.
//!
//! [`Needle3`] is the generation the shared model and state are instantiated with: this file
//! names both ([`Model`], [`State`]).
use alloc::vec::Vec;

use super::geometry::Layers;
use super::heads::{Pool, ProbeHead};
use super::mlp::HadamardMlp;
use super::{KvPrecision, Numerics};
use crate::blocks::model;
use crate::blocks::state::{self, Generation};
use crate::Result;

/// How a state runs its model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub kv: KvPrecision,
    pub numerics: Numerics,
    /// Blocks to run: the model's layer count, or a shallower ladder rung (2 and up).
    pub depth: usize,
    /// Session capacity in tokens (at most the model's `max_seq_len`): the most the global
    /// layers' KV rings grow to.
    pub max_tokens: usize,
    /// Tokens [`Model::prefill`] pushes through each weight matrix at once.
    pub prefill_chunk: usize,
    /// Pool hidden cells for the probe heads while running (see [`Model::head`]).
    pub track_heads: bool,
}

/// Needle 3 as the shared [`state::State`] sees it.
pub enum Needle3 {}

impl Generation for Needle3 {
    type Attention = Layers;
    const A8_MIXING: bool = true;
    type Options = Options;
    type Mlp = HadamardMlp;
    type Head<'a> = ProbeHead<'a>;
    type Pool = Pool;
}

/// A Needle 3 model over the bytes of its container (built in `model.rs`).
pub type Model<'a> = model::Model<'a, Needle3>;

/// The sequence state of one [`Model`].
pub type State = state::State<Needle3>;

impl State {
    pub(crate) fn new(model: &Model<'_>, options: &Options) -> Result<Self> {
        let g = &model.geometry;
        Self::check_capacity(options.max_tokens, g.max_seq_len)?;
        let layers = model.layer_indices(options.depth)?;
        let plan = g.plan(&layers, options.max_tokens);
        let deploy = options.numerics == Numerics::Deploy;
        let seq = model.stack.sequence(
            plan,
            options.kv,
            options.max_tokens,
            options.prefill_chunk,
            deploy,
        )?;
        let pools = if options.track_heads {
            model.heads.iter().map(|hd| Pool::new(hd, g.num_layers + 1, g.d_model)).collect()
        } else {
            Vec::new()
        };
        Ok(Self { geometry: g.clone(), options: *options, seq, pools })
    }
}
