//! Everything one Needle 3 sequence needs: the shared stack's sequence state (KV rings that grow
//! with the sequence, conv and Engram tails, chunk scratch) and the streamed head pools.
use alloc::vec::Vec;

use super::heads::Pool;
use super::geometry::Geometry;
use super::mlp::MlpScratch;
use super::model::Model;
use super::{KvPrecision, Numerics};
use crate::blocks::stack::{self, Sequence};
use crate::{Error, Result};

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

/// A saved position of a [`State`] ([`State::mark`]).
pub(crate) struct Mark {
    seq: stack::Mark,
    pools: Vec<Pool>,
}

/// The sequence state of one [`Model`].
pub struct State {
    pub(crate) geometry: Geometry,
    pub(crate) options: Options,
    pub(crate) seq: Sequence<MlpScratch>,
    /// Per probe head of the model, when tracking.
    pub(crate) pools: Vec<Pool>,
}

impl State {
    pub(crate) fn new(model: &Model<'_>, options: &Options) -> Result<Self> {
        let g = &model.geometry;
        if options.max_tokens == 0 || options.max_tokens > g.max_seq_len {
            return Err(Error::InvalidArgument { name: "max_context", reason: "must be 1 to the model's max_seq_len" });
        }
        let layers = model.layer_indices(options.depth)?;
        let plan = g.plan(&layers, options.max_tokens);
        let deploy = options.numerics == Numerics::Deploy;
        let seq = model.stack.sequence(plan, options.kv, options.max_tokens, options.prefill_chunk, deploy)?;
        let pools = if options.track_heads {
            model.heads.iter().map(|hd| Pool::new(hd, g.num_layers + 1, g.d_model)).collect()
        } else {
            Vec::new()
        };
        Ok(Self { geometry: g.clone(), options: *options, seq, pools })
    }

    /// Tokens consumed so far.
    pub fn position(&self) -> usize {
        self.seq.pos
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Forgets the sequence (buffers are kept; stale cache entries are never read again).
    pub fn reset(&mut self) {
        self.seq.reset();
        for p in &mut self.pools {
            p.clear();
        }
    }

    /// A copy of where the sequence is (KV rings, tails, head pools), to come back to with
    /// [`State::rewind`]: how a search tries several continuations of one prefix.
    pub(crate) fn mark(&self) -> Mark {
        Mark { seq: self.seq.mark(), pools: self.pools.clone() }
    }

    /// Goes back to `mark`, taken from this state.
    pub(crate) fn rewind(&mut self, mark: &Mark) {
        self.seq.rewind(&mark.seq);
        self.pools.clone_from(&mark.pools);
    }

    /// Bytes held by the KV rings.
    pub fn kv_bytes(&self) -> usize {
        self.seq.kv_bytes()
    }

    /// Bytes held by the streamed head pools.
    pub fn head_pool_bytes(&self) -> usize {
        self.pools.iter().map(Pool::bytes).sum()
    }

    /// Refuses a state made for a model of another shape.
    pub(crate) fn check_model(&self, model: &Model<'_>) -> Result<()> {
        if self.geometry != model.geometry {
            return Err(Error::InvalidArgument { name: "state", reason: "made for another model" });
        }
        Ok(())
    }
}
