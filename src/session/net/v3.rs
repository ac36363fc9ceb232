//! Needle 3 behind the session's [`Net`](super::Net).
use super::{Loaded, NetModel};
use crate::container::V3Container;
use crate::session::{Backend, HeadKind, LoadOptions, ModelInfo};
use crate::v3::{Model, Needle3, Options, State};
use crate::{Error, Result};

/// The model and a state made with the caller's `options` over the model's defaults.
pub(super) fn load<'a>(c: &V3Container<'a>, options: &LoadOptions) -> Result<Loaded<Model<'a>>> {
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
    opts.max_tokens = options.max_tokens.unwrap_or(opts.max_tokens);
    opts.track_heads = model.heads().next().is_some();
    opts
}

impl NetModel for Model<'_> {
    type Gen = Needle3;

    fn prefill(&self, state: &mut State, ids: &[u32], logits: &mut [f32]) -> Result<()> {
        Model::prefill(self, state, ids, logits)
    }

    fn prefill_rows(&self, state: &mut State, ids: &[u32], rows: &mut [f32]) -> Result<()> {
        Model::prefill_rows(self, state, ids, rows)
    }

    fn info(&self, state: &State) -> ModelInfo {
        let (g, o) = (self.geometry(), state.options());
        ModelInfo {
            generation: 3,
            vocab: g.vocab,
            logits_len: self.logits_len(),
            d_model: g.d_model,
            num_layers: g.num_layers,
            depth: o.depth,
            max_seq_len: g.max_seq_len,
            capacity: o.max_tokens,
            kv: o.kv,
            numerics: o.numerics,
            heads: self.heads().collect(),
            backend: Backend::Cpu,
        }
    }

    fn confidence(&self, state: &State, _ids: &[u32]) -> Result<f32> {
        let logit = self.head(state, HeadKind::Confidence)?;
        logit.first().copied().ok_or(Error::Unsupported { what: "empty confidence head output" })
    }
}
