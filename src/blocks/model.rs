//! The Needle model, once for both generations: weights viewed in place in the container bytes
//! (CQ matrices are never expanded; FP16 vectors are widened to f32 once), their probe heads,
//! and the entry points that run tokens through a [`State`]. A generation builds it from its
//! container and adds what is its own (`v2/model.rs`, `v3/model.rs`: defaults, head readout).
use alloc::vec::Vec;

use super::geometry::Geometry;
use super::pool::{Probe, Tracked};
use super::stack::{LayerPlan, Logits, Stack};
use super::state::{Generation, RunOptions, State};
use crate::{Error, Result};

/// A Needle model of generation `G` (`v3::Model`, `v2::Model`) over the bytes of its container.
pub struct Model<'a, G: Generation> {
    pub(crate) geometry: Geometry<G::Attention>,
    pub(crate) stack: Stack<'a, G::Mlp>,
    pub(crate) heads: Vec<G::Head<'a>>,
}

impl<'a, G: Generation> Model<'a, G> {
    pub fn geometry(&self) -> &Geometry<G::Attention> {
        &self.geometry
    }

    /// Length of one logits row: the rows of the output head (Needle 2: the whole vocabulary;
    /// Needle 3: the header's `out_vocab` rows of the tied embedding).
    pub fn logits_len(&self) -> usize {
        self.stack.lm_head.rows()
    }

    /// Runs `tokens` and writes the logits after the last one into `logits`
    /// ([`Self::logits_len`] floats).
    pub fn prefill(&self, state: &mut State<G>, tokens: &[u32], logits: &mut [f32]) -> Result<()> {
        self.advance(state, tokens, Logits::last(logits, self.logits_len())?)
    }

    /// Runs `tokens` and writes the logits after each of them, row by row, into `rows`
    /// (`tokens.len() * logits_len()` floats).
    pub fn prefill_rows(
        &self,
        state: &mut State<G>,
        tokens: &[u32],
        rows: &mut [f32],
    ) -> Result<()> {
        self.advance(state, tokens, Logits::all(rows, tokens.len(), self.logits_len())?)
    }

    /// Runs one token and writes the logits after it.
    pub fn step(&self, state: &mut State<G>, token: u32, logits: &mut [f32]) -> Result<()> {
        self.prefill(state, core::slice::from_ref(&token), logits)
    }

    fn advance(&self, state: &mut State<G>, tokens: &[u32], logits: Logits<'_>) -> Result<()> {
        state.check_model(&self.geometry)?;
        let mut cells = Tracked { heads: &self.heads, pools: &mut state.pools };
        self.stack.advance(&mut state.seq, tokens, logits, &mut cells)
    }

    /// A fresh state under `options`, running the blocks `plan` lays out (asked once the
    /// capacity is checked) and, when tracking, pooling for each probe head with `pool`.
    pub(crate) fn state_with(
        &self,
        options: &G::Options,
        plan: impl FnOnce() -> Result<Vec<LayerPlan>>,
        pool: impl Fn(&G::Head<'a>) -> G::Pool,
    ) -> Result<State<G>> {
        let (run, g) = (options.run(), &self.geometry);
        State::<G>::check_capacity(run.max_tokens, g.max_seq_len)?;
        let seq =
            self.stack.sequence(plan()?, run.kv, run.max_tokens, run.prefill_chunk, run.deploy)?;
        let pools =
            if run.track_heads { self.heads.iter().map(pool).collect() } else { Vec::new() };
        Ok(State { geometry: g.clone(), options: *options, seq, pools })
    }

    /// The probe heads the container carries, in file order.
    pub fn heads(&self) -> impl Iterator<Item = <G::Head<'a> as Probe>::Kind> + '_ {
        self.heads.iter().map(Probe::kind)
    }

    /// The `kind` probe head and what `state` pooled for it (a state made with `track_heads`).
    pub(crate) fn tracked<'s>(
        &self,
        state: &'s State<G>,
        kind: <G::Head<'a> as Probe>::Kind,
    ) -> Result<(&G::Head<'a>, &'s G::Pool)> {
        state.check_model(&self.geometry)?;
        let i = self
            .heads
            .iter()
            .position(|h| h.kind() == kind)
            .ok_or(Error::Unsupported { what: "probe head absent from the container" })?;
        let pool = state
            .pools
            .get(i)
            .ok_or(Error::InvalidArgument { name: "state", reason: "made without track_heads" })?;
        Ok((&self.heads[i], pool))
    }
}
