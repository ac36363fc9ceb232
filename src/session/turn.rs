//! A request in flight ([`Turn`]), in the parts the engine's stages work on: the prompt
//! (render and encode, prefix reuse, prefill), the steering of decoding (close, search, mask)
//! and the output (sample, accept, stop); and what its calls are checked against.
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use crate::constrained::Constraint;
use crate::grounding::Grounds;
use crate::json::Value;
use crate::prompt::Role;
use crate::sampling::Sampler;
use crate::tokenizer::{IncrementalDecoder, Tokenizer};

use super::request::{Request, StopReason};

pub(super) struct Turn {
    pub(super) prompt: Prompt,
    pub(super) steer: Steer,
    pub(super) out: Output,
    /// What the completion's calls are checked against.
    pub(super) grounds: Grounds,
}

/// The rendered prompt and how much of it has run.
pub(super) struct Prompt {
    pub(super) text: String,
    pub(super) ids: Vec<u32>,
    /// Leading ids the state already held (see [`super::prefix`]).
    pub(super) cached: usize,
    /// Every id has run (see `Engine::prefill`).
    pub(super) prefilled: bool,
}

/// What steers decoding besides sampling: the constraint, and tokens chosen ahead.
pub(super) struct Steer {
    pub(super) constraint: Option<Constraint>,
    /// Value search is on (see [`Request::value_search`]).
    pub(super) value_search: bool,
    /// The value being written has been searched (so it is not searched again).
    pub(super) value_searched: bool,
    /// Tokens a value search or the closing of a required call chose, still to be emitted.
    pub(super) chosen: VecDeque<u32>,
    /// The required call is being closed (see [`crate::constrained::Constraint::closing`]).
    pub(super) closing: bool,
    /// Tokens of the shortest whole call, once known.
    pub(super) reserve: Option<usize>,
}

/// The completion so far.
pub(super) struct Output {
    pub(super) tokens: Vec<u32>,
    pub(super) budget: usize,
    pub(super) sampler: Sampler,
    pub(super) decoder: IncrementalDecoder,
    pub(super) text: String,
    /// The last sampled token, not yet run through the model.
    pub(super) unfed: Option<u32>,
    pub(super) stop: Option<StopReason>,
}

impl Steer {
    pub(super) fn new(constraint: Option<Constraint>, value_search: bool) -> Self {
        Steer {
            constraint,
            value_search,
            value_searched: false,
            chosen: VecDeque::new(),
            closing: false,
            reserve: None,
        }
    }
}

impl Output {
    /// Nothing generated yet; a budget of 0 has stopped already.
    pub(super) fn new(budget: usize, sampler: Sampler, tokenizer: &Tokenizer) -> Self {
        Output {
            tokens: Vec::new(),
            budget,
            sampler,
            decoder: IncrementalDecoder::new(tokenizer),
            text: String::new(),
            unfed: None,
            stop: if budget == 0 { Some(StopReason::MaxTokens) } else { None },
        }
    }
}

/// What `req`'s calls are checked against: `tools`, its user-side texts (the newest last; an
/// empty query adds no turn) and `system` as rendered.
pub(super) fn grounds(req: &Request, tools: Option<Value>, system: Option<&str>) -> Grounds {
    let inputs = req
        .turns
        .iter()
        .filter(|t| t.role != Role::Assistant)
        .map(|t| t.text)
        .chain(Some(req.query).filter(|q| !q.is_empty() || req.turns.is_empty()))
        .map(String::from)
        .collect();
    Grounds { tools, inputs, system: system.unwrap_or("").into() }
}
