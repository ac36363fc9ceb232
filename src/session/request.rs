//! The data crossing the engine's edge: a request in, tokens and a completion out.
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use crate::grounding::Validation;
use crate::json;
use crate::prompt;
use crate::response::Response;

/// One generation request.
#[derive(Clone, Debug, PartialEq)]
pub struct Request<'r> {
    /// The newest user message (empty after earlier turns: answer the last of them).
    pub query: &'r str,
    /// The conversation so far, oldest first; rendered before `query` by
    /// [`prompt::render_conversation`]. Empty: a single-turn request.
    pub turns: &'r [prompt::Turn<'r>],
    /// The tool list as JSON text, in the caller's key order (empty: no tools). OpenAI-style
    /// entries (`{"type":"function","function":{..}}`) are unwrapped to the flat schema the
    /// models are trained on, as upstream's own client does before rendering.
    pub tools_json: &'r str,
    pub system: Option<&'r str>,
    /// The date fact's value (`YYYY-MM-DD Ddd HH:MM`, the host's clock): prefixed to the
    /// system text as `date: …` by upstream's `auto_date` rule
    /// ([`crate::grounding::with_date_fact`]). `None`: the prompt has no date fact.
    pub date: Option<&'r str>,
    /// Completion tokens at most.
    pub max_tokens: usize,
    pub temperature: f32,
    pub seed: u64,
    pub top_k: usize,
    pub top_p: f32,
    /// Schema-constrained decoding: only completions in the tool-call format whose calls fit
    /// the tools' schemas can be generated (see [`crate::constrained`]).
    pub constrained: bool,
    /// Extractive decoding: schema-constrained, and every free-text string argument (a
    /// `string` without an `enum`) must be copied from `query`, whole words at both ends,
    /// ignoring ASCII case.
    pub extractive: bool,
    /// Value search: schema-constrained, and each argument value is the one the model gives
    /// the highest probability as a whole, found by a best-first search over its tokens,
    /// instead of the token-by-token greedy choice (see [`super::search`]). Needs temperature 0.
    pub value_search: bool,
    /// Encode chat markers typed in the query, tool list or system prompt as the marker tokens,
    /// as upstream does (for parity tests). Off by default: caller text is encoded as plain
    /// pieces, so text from a page or a user cannot close the turn or forge a tool call.
    pub allow_control_tokens: bool,
    /// Schema-constrained, and the refusal `[]` is masked: the answer calls a tool (OpenAI's
    /// `tool_choice: "required"`). Without tools the refusal stays the only answer. When the
    /// budget runs low the call is closed so the result parses
    /// ([`crate::constrained::Constraint::closing`]).
    pub require_call: bool,
    /// Schema-constrained, and each call's arguments held to its tool's whole JSON schema
    /// (structured output: nested values, numeric bounds, lengths, patterns). A schema keyword
    /// the matcher cannot hold is refused (`unsupported`) rather than ignored.
    pub full_schema: bool,
}

impl<'r> Request<'r> {
    /// Greedy, unconstrained decoding of up to 256 tokens, upstream's defaults otherwise.
    pub fn new(query: &'r str, tools_json: &'r str) -> Self {
        Request {
            query,
            turns: &[],
            tools_json,
            system: None,
            date: None,
            max_tokens: 256,
            temperature: 0.0,
            seed: 0,
            top_k: 0,
            top_p: 1.0,
            constrained: false,
            extractive: false,
            value_search: false,
            allow_control_tokens: false,
            require_call: false,
            full_schema: false,
        }
    }
}

/// Why a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The model emitted its end-of-sequence id.
    Eos,
    /// The model closed its turn with `<|im_end|>`.
    ImEnd,
    /// The request's token budget ran out.
    MaxTokens,
    /// The session's capacity (or the model's context) is full.
    ContextFull,
    /// The host called [`Engine::abort`].
    Aborted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Eos => "eos",
            StopReason::ImEnd => "im_end",
            StopReason::MaxTokens => "max_tokens",
            StopReason::ContextFull => "context_full",
            StopReason::Aborted => "aborted",
        }
    }
}

/// One generated token and the text it completes (empty while a UTF-8 character or a
/// byte-fallback sequence is still open, and for the stop token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub id: u32,
    pub text: String,
}

/// A finished generation, in upstream's response shape plus what a host reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    pub prompt: String,
    pub prompt_ids: Vec<u32>,
    /// Leading prompt ids the engine's state already held from earlier requests, so not run
    /// again.
    pub cached_tokens: usize,
    /// Generated ids, the stop token included.
    pub tokens: Vec<u32>,
    pub response: Response,
    /// The grounding checks on the calls.
    pub validation: Validation,
    /// `sigmoid` of the confidence head's logit over prompt + completion, when the container
    /// carries that head.
    pub confidence: Option<f32>,
    pub stop_reason: StopReason,
}

impl Completion {
    /// The envelope as JSON: upstream's response keys and `validation`, plus `confidence`,
    /// `stop_reason` and `usage`.
    pub fn to_value(&self) -> json::Value {
        let json::Value::Object(mut members) = self.response.to_value() else { unreachable!() };
        let confidence = match self.confidence {
            Some(c) => json::Value::Float(c as f64),
            None => json::Value::Null,
        };
        members.push(("validation".into(), self.validation.to_value()));
        members.push(("confidence".into(), confidence));
        members.push(("stop_reason".into(), json::Value::String(self.stop_reason.as_str().into())));
        members.push((
            "usage".into(),
            json::Value::Object(vec![
                ("prompt_tokens".into(), json::Value::Int(self.prompt_ids.len().to_string())),
                ("completion_tokens".into(), json::Value::Int(self.tokens.len().to_string())),
                ("cached_tokens".into(), json::Value::Int(self.cached_tokens.to_string())),
            ]),
        ));
        json::Value::Object(members)
    }
}
