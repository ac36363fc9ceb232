//! Tool retrieval with the contrastive head: upstream trains it (`forward_contrastive`) so
//! that a query's embedding and the embedding of the tool it needs point the same way; tools
//! rank by the cosine of the two unit vectors (the head's learned temperature scales every
//! score alike, so the order does not depend on it).
//!
//! Each text runs as its own sequence, `[BOS] + encode(text)`, full causal (the window
//! upstream's heads run with), on a caller-supplied state used as scratch, one text at a
//! time: memory is one state however many tools there are.
use alloc::vec;
use alloc::vec::Vec;

use super::model::Model;
use super::state::State;
use super::HeadKind;
use crate::blocks::stack::Logits;
use crate::kernels::dot;
use crate::tokenizer::Tokenizer;
use crate::Result;

/// One tool's relevance to a query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranked {
    /// Position of the tool in the list given.
    pub index: usize,
    /// Cosine similarity of the query's and the tool's contrastive embeddings.
    pub score: f32,
}

impl Model<'_> {
    /// The contrastive embedding of `tokens` run as a fresh, full-causal sequence
    /// (upstream's `encode_contrastive(tokens)`): a unit vector. Uses `state` as scratch — it
    /// needs `track_heads` and KV rings that hold `tokens` in full — and leaves it empty with
    /// its window unchanged.
    pub fn embed(&self, state: &mut State, tokens: &[u32]) -> Result<Vec<f32>> {
        self.head_index(HeadKind::Contrastive)?;
        let window = state.window();
        state.set_window(0)?;
        let out = self.advance(state, tokens, Logits::None).and_then(|()| self.head(state, HeadKind::Contrastive));
        state.set_window(window).expect("the state held this window before");
        out
    }

    /// The `k` tools (token ids, each with its BOS) most relevant to `query`, best first;
    /// equal scores keep list order.
    pub fn rank_tools(&self, state: &mut State, query: &[u32], tools: &[&[u32]], k: usize) -> Result<Vec<Ranked>> {
        let q = self.embed(state, query)?;
        let mut ranked = Vec::with_capacity(tools.len());
        for (index, tool) in tools.iter().enumerate() {
            ranked.push(Ranked { index, score: dot(&q, &self.embed(state, tool)?) });
        }
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
        ranked.truncate(k);
        Ok(ranked)
    }

    /// [`Self::rank_tools`] over texts: the query and each tool description run as
    /// `[BOS] + encode(text)`.
    pub fn retrieve_tools(&self, state: &mut State, tokenizer: &Tokenizer, query: &str, tool_descriptions: &[&str], k: usize) -> Result<Vec<Ranked>> {
        let ids = |text: &str| -> Vec<u32> {
            let mut ids = vec![tokenizer.bos_id()];
            ids.extend(tokenizer.encode(text));
            ids
        };
        let tools: Vec<Vec<u32>> = tool_descriptions.iter().map(|t| ids(t)).collect();
        let tools: Vec<&[u32]> = tools.iter().map(Vec::as_slice).collect();
        self.rank_tools(state, &ids(query), &tools, k)
    }
}
