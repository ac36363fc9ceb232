//! The sequence state both generations keep, once: the stack's [`Sequence`] (KV rings that grow
//! with the sequence, conv and Engram tails, chunk scratch), the probe heads' streamed pools,
//! and what it was made with. A generation names its own types through [`Generation`] and adds
//! only what is its own (how a state is made; Needle 2's switchable window).
use alloc::vec::Vec;

use super::geometry::Geometry;
use super::kv::KvPrecision;
use super::persist::{mismatch, Reader, Writer};
use super::pool::{HeadPool, Probe};
use super::stack::{self, Mlp, Sequence};
use crate::{Error, Result};

/// The types one generation plugs into its [`State`] and its [`Model`](super::model::Model).
pub trait Generation {
    /// How its layers attend, the part of the model's [`Geometry`] that is its own (a state
    /// runs only the model it was made for).
    type Attention: Clone + PartialEq;
    /// Whether deploy numerics also round the mHC coefficient input to int8.
    const A8_MIXING: bool;
    /// Whether a layer listed for two Engram sites runs both (Needle 3) or only the first
    /// (Needle 2, as upstream's incremental decoder `_forward_cached` does).
    const EVERY_SITE: bool;
    /// How a state runs its model ([`generation!`] declares it).
    type Options: Copy + RunOptions;
    /// The MLP of its blocks.
    type Mlp: Mlp;
    /// One probe head's weights.
    type Head<'a>: Probe<Pool = Self::Pool>;
    /// One probe head's streamed pool.
    type Pool: HeadPool;
}

/// What the options of every generation say about the sequence a state runs.
pub struct Run {
    pub(crate) kv: KvPrecision,
    /// Deploy numerics.
    pub(crate) deploy: bool,
    pub(crate) max_tokens: usize,
    pub(crate) prefill_chunk: usize,
    pub(crate) track_heads: bool,
}

/// A generation's options as the shared model makes a state with them.
pub trait RunOptions {
    fn run(&self) -> Run;
}

/// Declares a generation `$gen`: its options (the fields every generation has, and its own
/// `$own`), the types it plugs into the shared model and state ([`Generation`]), and its
/// `Model` and `State`.
macro_rules! generation {
    (
        $(#[$doc:meta])*
        $gen:ident {
            Attention = $att:ty,
            A8_MIXING = $a8:expr,
            EVERY_SITE = $every_site:expr,
            Mlp = $mlp:ty,
            Head = $head:ident $(,)?
        }
        $(#[$own_doc:meta])*
        $own:ident: $own_ty:ty
    ) => {
        /// How a state runs its model.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Options {
            /// KV-cache storage.
            pub kv: $crate::blocks::KvPrecision,
            pub numerics: $crate::blocks::Numerics,
            /// Session capacity in tokens (at most the model's `max_seq_len`): the most the KV
            /// rings grow to.
            pub max_tokens: usize,
            $(#[$own_doc])*
            pub $own: $own_ty,
            /// Tokens [`Model::prefill`] pushes through each weight matrix at once.
            pub prefill_chunk: usize,
            /// Pool hidden cells for the probe heads while running (see [`Model::head`]).
            pub track_heads: bool,
        }

        impl $crate::blocks::state::RunOptions for Options {
            fn run(&self) -> $crate::blocks::state::Run {
                $crate::blocks::state::Run {
                    kv: self.kv,
                    deploy: self.numerics == $crate::blocks::Numerics::Deploy,
                    max_tokens: self.max_tokens,
                    prefill_chunk: self.prefill_chunk,
                    track_heads: self.track_heads,
                }
            }
        }

        $(#[$doc])*
        pub enum $gen {}

        impl $crate::blocks::state::Generation for $gen {
            type Attention = $att;
            const A8_MIXING: bool = $a8;
            const EVERY_SITE: bool = $every_site;
            type Options = Options;
            type Mlp = $mlp;
            type Head<'a> = $head<'a>;
            type Pool = $crate::blocks::pool::ProbePool;
        }

        /// A model of this generation over the bytes of its container (built in `model.rs`).
        pub type Model<'a> = $crate::blocks::model::Model<'a, $gen>;

        /// The sequence state of one [`Model`].
        pub type State = $crate::blocks::state::State<$gen>;
    };
}
pub(crate) use generation;

/// A saved position of a [`State`] ([`State::mark`]).
pub(crate) struct Mark<G: Generation> {
    seq: stack::Mark,
    pools: Vec<G::Pool>,
}

/// The sequence state of one model of generation `G` (`v3::State`, `v2::State`).
pub struct State<G: Generation> {
    pub(crate) geometry: Geometry<G::Attention>,
    pub(crate) options: G::Options,
    pub(crate) seq: Sequence<<G::Mlp as Mlp>::Scratch>,
    /// Per probe head of the model, when tracking.
    pub(crate) pools: Vec<G::Pool>,
}

impl<G: Generation> State<G> {
    /// Tokens consumed so far.
    pub fn position(&self) -> usize {
        self.seq.pos
    }

    pub fn options(&self) -> &G::Options {
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
    pub(crate) fn mark(&self) -> Mark<G> {
        Mark { seq: self.seq.mark(), pools: self.pools.clone() }
    }

    /// Goes back to `mark`, taken from this state.
    pub(crate) fn rewind(&mut self, mark: &Mark<G>) {
        self.seq.rewind(&mark.seq);
        self.pools.clone_from(&mark.pools);
    }

    /// Writes the sequence (what a [`Mark`] holds) for [`State::load`].
    pub(crate) fn save(&self, w: &mut Writer) {
        self.seq.save(w);
        w.u64(self.pools.len() as u64);
        for p in &self.pools {
            p.save(w);
        }
    }

    /// Bytes [`State::save`] writes for a sequence at position `pos` (a loading state knows the
    /// length before it reads any: how a host bounds what it reads of a snapshot file).
    pub(crate) fn saved_len(&self, pos: usize) -> usize {
        self.seq.saved_len(pos) + 8 + self.pools.iter().map(HeadPool::bytes).sum::<usize>()
    }

    /// Replaces the sequence with what [`State::save`] wrote from a state of the same model
    /// and options; on a refusal the state is reset.
    pub(crate) fn load(&mut self, bytes: &[u8]) -> Result<()> {
        self.reset();
        let mut r = Reader::new(bytes);
        let result = (|| {
            self.seq.load(&mut r)?;
            if r.u64()? != self.pools.len() as u64 {
                return Err(mismatch("head tracking"));
            }
            for p in &mut self.pools {
                p.load(&mut r)?;
            }
            r.finish()
        })();
        if result.is_err() {
            self.reset();
        }
        result
    }

    /// Bytes held by the KV rings.
    pub fn kv_bytes(&self) -> usize {
        self.seq.kv_bytes()
    }

    /// Bytes held by the streamed head pools.
    pub fn head_pool_bytes(&self) -> usize {
        self.pools.iter().map(G::Pool::bytes).sum()
    }

    /// Refuses a state made for a model of another shape.
    pub(crate) fn check_model(&self, geometry: &Geometry<G::Attention>) -> Result<()> {
        if self.geometry != *geometry {
            return Err(Error::InvalidArgument { name: "state", reason: "made for another model" });
        }
        Ok(())
    }

    /// Refuses a capacity of no tokens or more than the model's context.
    pub(crate) fn check_capacity(max_tokens: usize, max_seq_len: usize) -> Result<()> {
        if max_tokens == 0 || max_tokens > max_seq_len {
            return Err(Error::InvalidArgument {
                name: "max_context",
                reason: "must be 1 to the model's max_seq_len",
            });
        }
        Ok(())
    }
}
