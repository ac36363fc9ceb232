//! Needle 3 behind the session's [`Net`](super::Net).
use super::{Loaded, NetGeneration};
use crate::container::V3Container;
use crate::session::{Backend, HeadKind, LoadOptions, ModelInfo};
use crate::v3::{Model, Needle3, Options, State};
use crate::{Error, Result};

/// The model and a state made with the caller's `options` over the model's defaults.
pub(super) fn load<'a>(c: &V3Container<'a>, options: &LoadOptions) -> Result<Loaded<'a, Needle3>> {
    let model = Model::new(c)?;
    let state = model.new_state(&state_options(&model, options))?;
    Ok(Loaded { model, state })
}

/// The caller's `options` over the model's defaults.
pub(super) fn state_options(model: &Model<'_>, options: &LoadOptions) -> Options {
    let mut opts = model.default_options();
    opts.kv = options.kv.unwrap_or(opts.kv);
    opts.numerics = options.numerics;
    opts.depth = options.layers.unwrap_or(opts.depth);
    opts.max_tokens = options.context.unwrap_or(opts.max_tokens);
    opts.track_heads = model.heads().next().is_some();
    opts
}

impl NetGeneration for Needle3 {
    fn info(model: &Model<'_>, state: &State) -> ModelInfo {
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
            backend: Backend::Cpu,
        }
    }

    fn confidence(model: &Model<'_>, state: &State, _ids: &[u32]) -> Result<f32> {
        let logit = model.head(state, HeadKind::Confidence)?;
        logit.first().copied().ok_or(Error::Unsupported { what: "empty confidence head output" })
    }

    /// Needle 3 pools each row apart, so a prompt split where the snapshot ends gives the bits
    /// of one run whole.
    fn snapshots() -> Result<()> {
        Ok(())
    }
}
