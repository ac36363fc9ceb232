//! The model of one generation and its sequence state behind one interface.
use alloc::vec;

use super::{HeadKind, LoadOptions, ModelInfo};
use crate::container::Container;
use crate::kernels::parallel;
use crate::{v2, v3};
use crate::{Error, Result};

/// The model of one generation and its sequence state: the one place the generations meet.
// An engine holds exactly one `Net`, so the variants' size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Net<'a> {
    V2 { model: v2::Model<'a>, state: v2::State },
    V3 { model: v3::Model<'a>, state: v3::State },
}

impl<'a> Net<'a> {
    pub(super) fn load(container: Container<'a>, options: &LoadOptions) -> Result<Self> {
        Ok(match container {
            Container::V3(c) => {
                let model = v3::Model::new(&c)?;
                let mut opts = model.default_options();
                opts.kv = options.kv.unwrap_or(opts.kv);
                opts.numerics = options.numerics;
                opts.depth = options.layers.unwrap_or(opts.depth);
                opts.max_tokens = options.max_tokens.unwrap_or(opts.max_tokens);
                opts.track_heads = model.heads().next().is_some();
                let state = model.new_state(&opts)?;
                Net::V3 { model, state }
            }
            Container::V2(c) => {
                let model = v2::Model::new(&c)?;
                if options.layers.is_some_and(|l| l != model.geometry().num_layers) {
                    return Err(Error::Unsupported { what: "ladder depths (Needle 2 has no ladder)" });
                }
                let mut opts = model.default_options();
                opts.kv = options.kv.unwrap_or(opts.kv);
                opts.numerics = options.numerics;
                opts.max_tokens = options.max_tokens.unwrap_or(opts.max_tokens);
                opts.track_heads = model.heads().next().is_some();
                let state = model.new_state(&opts)?;
                Net::V2 { model, state }
            }
        })
    }

    pub(super) fn info(&self) -> ModelInfo {
        match self {
            Net::V3 { model, state } => {
                let (g, o) = (model.geometry(), state.options());
                ModelInfo {
                    generation: 3,
                    vocab: g.vocab,
                    logits_len: model.logits_len(),
                    d_model: g.d_model,
                    num_layers: g.num_layers,
                    depth: o.depth,
                    max_seq_len: g.max_seq_len,
                    capacity: o.max_tokens,
                    kv: o.kv,
                    numerics: o.numerics,
                    heads: model.heads().collect(),
                }
            }
            Net::V2 { model, state } => {
                let (g, o) = (model.geometry(), state.options());
                ModelInfo {
                    generation: 2,
                    vocab: g.vocab,
                    logits_len: model.logits_len(),
                    d_model: g.d_model,
                    num_layers: g.num_layers,
                    depth: g.num_layers,
                    max_seq_len: g.max_seq_len,
                    capacity: o.max_tokens,
                    kv: o.kv,
                    numerics: o.numerics,
                    heads: model
                        .heads()
                        .map(|h| match h {
                            v2::HeadKind::Contrastive => HeadKind::Embedding,
                            v2::HeadKind::Confidence => HeadKind::Confidence,
                        })
                        .collect(),
                }
            }
        }
    }

    pub(super) fn reset(&mut self) {
        match self {
            Net::V2 { state, .. } => state.reset(),
            Net::V3 { state, .. } => state.reset(),
        }
    }

    pub(super) fn kv_bytes(&self) -> usize {
        match self {
            Net::V2 { state, .. } => state.kv_bytes(),
            Net::V3 { state, .. } => state.kv_bytes(),
        }
    }

    pub(super) fn position(&self) -> usize {
        match self {
            Net::V2 { state, .. } => state.position(),
            Net::V3 { state, .. } => state.position(),
        }
    }

    /// Runs `ids` after what the state holds, writing the logits after the last one.
    pub(super) fn feed(&mut self, ids: &[u32], logits: &mut [f32]) -> Result<()> {
        parallel::run(|| match self {
            Net::V2 { model, state } => model.prefill(state, ids, logits),
            Net::V3 { model, state } => model.prefill(state, ids, logits),
        })
    }

    /// Runs `ids` after what the state holds, writing the logits after each of them.
    pub(super) fn feed_rows(&mut self, ids: &[u32], rows: &mut [f32]) -> Result<()> {
        parallel::run(|| match self {
            Net::V2 { model, state } => model.prefill_rows(state, ids, rows),
            Net::V3 { model, state } => model.prefill_rows(state, ids, rows),
        })
    }

    /// A copy of where the sequence is, to come back to with [`Self::rewind`].
    pub(super) fn mark(&self) -> NetMark {
        match self {
            Net::V2 { state, .. } => NetMark::V2(state.mark()),
            Net::V3 { state, .. } => NetMark::V3(state.mark()),
        }
    }

    pub(super) fn rewind(&mut self, mark: &NetMark) {
        match (self, mark) {
            (Net::V2 { state, .. }, NetMark::V2(mark)) => state.rewind(mark),
            (Net::V3 { state, .. }, NetMark::V3(mark)) => state.rewind(mark),
            _ => unreachable!("a mark is only taken from this net"),
        }
    }

    /// The confidence head's logit over the whole sequence `ids` the state has consumed.
    pub(super) fn confidence(&self, ids: &[u32]) -> Result<f32> {
        let logit = match self {
            Net::V3 { model, state } => model.head(state, HeadKind::Confidence)?,
            // Upstream scores with full causal attention; a windowed state that has already
            // cut keys off re-runs the exchange on a full-causal scratch state.
            Net::V2 { model, state } if state.is_full_causal() => model.head(state, v2::HeadKind::Confidence)?,
            Net::V2 { model, state } => {
                let opts = v2::Options { window: 0, max_tokens: ids.len(), track_heads: true, ..*state.options() };
                let mut scratch = model.new_state(&opts)?;
                let mut logits = vec![0.0; model.logits_len()];
                model.prefill(&mut scratch, ids, &mut logits)?;
                model.head(&scratch, v2::HeadKind::Confidence)?
            }
        };
        logit.first().copied().ok_or(Error::Unsupported { what: "empty confidence head output" })
    }
}

/// A saved position of a [`Net`].
pub(super) enum NetMark {
    V2(v2::Mark),
    V3(v3::Mark),
}
