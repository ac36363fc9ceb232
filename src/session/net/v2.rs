//! Needle 2 behind the session's [`Net`](super::Net).
use alloc::vec;

use super::{Loaded, NetGeneration};
use crate::container::V2Container;
use crate::session::{Backend, HeadKind, LoadOptions, ModelInfo};
use crate::v2::{self, Model, Needle2, Options, State};
use crate::{Error, Result};

/// The model and a state made with the caller's `options` over the model's defaults.
pub(super) fn load<'a>(c: &V2Container<'a>, options: &LoadOptions) -> Result<Loaded<'a, Needle2>> {
    let model = Model::new(c)?;
    if options.layers.is_some_and(|l| l != model.geometry().num_layers) {
        return Err(Error::Unsupported { what: "ladder depths (Needle 2 has no ladder)" });
    }
    let mut opts = model.default_options();
    opts.kv = options.kv.unwrap_or(opts.kv);
    opts.numerics = options.numerics;
    opts.max_tokens = options.context.unwrap_or(opts.max_tokens);
    opts.track_heads = model.heads().next().is_some();
    let state = model.new_state(&opts)?;
    Ok(Loaded { model, state })
}

impl NetGeneration for Needle2 {
    fn info(model: &Model<'_>, state: &State) -> ModelInfo {
        let (g, o) = (model.geometry(), state.options());
        let heads = model.heads().map(|h| match h {
            v2::HeadKind::Contrastive => HeadKind::Embedding,
            v2::HeadKind::Confidence => HeadKind::Confidence,
        });
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
            heads: heads.collect(),
            backend: Backend::Cpu,
        }
    }

    fn confidence(model: &Model<'_>, state: &State, ids: &[u32]) -> Result<f32> {
        let logit = if state.is_full_causal() {
            model.head(state, v2::HeadKind::Confidence)?
        } else {
            // Upstream scores with full causal attention; a windowed state that has already
            // cut keys off re-runs the exchange on a full-causal scratch state.
            let opts =
                Options { window: 0, max_tokens: ids.len(), track_heads: true, ..*state.options() };
            let mut scratch = model.new_state(&opts)?;
            let mut logits = vec![0.0; model.logits_len()];
            model.prefill(&mut scratch, ids, &mut logits)?;
            model.head(&scratch, v2::HeadKind::Confidence)?
        };
        logit.first().copied().ok_or(Error::Unsupported { what: "empty confidence head output" })
    }

    /// Refused: the confidence head pools every row of a chunk into one softmax, row by row,
    /// so its bits depend on where a prompt is split (by ULPs), and a snapshot splits the
    /// prompt where a fresh prefill may not.
    fn snapshots() -> Result<()> {
        Err(Error::Unsupported { what: "prefix snapshots of a Needle 2 model" })
    }
}
