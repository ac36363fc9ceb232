//! The session: where the model generations meet the text layer.
//!
//! An [`Engine`] owns one model (borrowing the container bytes), its tokenizer and one
//! sequence state. A request goes `start` (render the prompt, tokenize, prefill) ->
//! `next_token` per token (sample, stream the decoded piece) -> `finish` (parse the completion, run
//! the confidence head). Generation is step-wise so a host that must stay responsive — a Web
//! Worker waiting for an abort message — can yield between tokens; [`Engine::generate`] is
//! the same loop for hosts that need not.
//!
//! The core has no clock: callers time `start` (prefill) and `next_token` (decode) themselves.
use alloc::collections::VecDeque;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use crate::constrained::{Constraint, TokenTable};
use crate::container::{self, Container};
use crate::json;
use crate::prompt;
use crate::response::{self, Response};
use crate::sampling::Sampler;
use crate::tokenizer::{IncrementalDecoder, Tokenizer};
use crate::{v2, v3};
use crate::{Error, Result};

pub use crate::v3::{HeadKind, KvPrecision, Numerics};

mod search;

/// How a model is run. `None` fields take the container's own choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// KV-cache precision; default: int8 where the container declares `kv_bits = 8`.
    pub kv: Option<KvPrecision>,
    pub numerics: Numerics,
    /// Run a shallower ladder rung of this many layers (2..=num_layers).
    pub layers: Option<usize>,
    /// Session capacity in tokens (prompt + completion); default: the model's `max_seq_len`.
    /// The KV cache is allocated for this many tokens up front.
    pub max_tokens: Option<usize>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { kv: None, numerics: Numerics::Exact, layers: None, max_tokens: None }
    }
}

/// What a loaded model is, for display and for hosts sizing their UI.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub generation: u8,
    pub vocab: usize,
    /// Length of a logits row (the tied head's `out_vocab` slice when the container has one).
    pub logits_len: usize,
    pub d_model: usize,
    pub num_layers: usize,
    /// Layers this engine runs (a ladder rung when smaller than `num_layers`).
    pub depth: usize,
    pub max_seq_len: usize,
    /// Tokens this engine's state holds.
    pub capacity: usize,
    pub kv: KvPrecision,
    pub numerics: Numerics,
    pub heads: Vec<HeadKind>,
}

/// One generation request.
#[derive(Clone, Debug, PartialEq)]
pub struct Request<'r> {
    pub query: &'r str,
    /// The tool list as JSON text, in the caller's key order (empty: no tools). OpenAI-style
    /// entries (`{"type":"function","function":{..}}`) are unwrapped to the flat schema the
    /// models are trained on, as upstream's own client does before rendering.
    pub tools_json: &'r str,
    pub system: Option<&'r str>,
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
    /// instead of the token-by-token greedy choice (see [`search`]). Needs temperature 0.
    pub value_search: bool,
}

impl<'r> Request<'r> {
    /// Greedy, unconstrained decoding of up to 256 tokens, upstream's defaults otherwise.
    pub fn new(query: &'r str, tools_json: &'r str) -> Self {
        Request {
            query,
            tools_json,
            system: None,
            max_tokens: 256,
            temperature: 0.0,
            seed: 0,
            top_k: 0,
            top_p: 1.0,
            constrained: false,
            extractive: false,
            value_search: false,
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
    /// Generated ids, the stop token included.
    pub tokens: Vec<u32>,
    pub response: Response,
    /// `sigmoid` of the confidence head's logit over prompt + completion, when the container
    /// carries that head.
    pub confidence: Option<f32>,
    pub stop_reason: StopReason,
}

impl Completion {
    /// The envelope as JSON: upstream's response keys plus `confidence`, `stop_reason` and
    /// `usage`.
    pub fn to_value(&self) -> json::Value {
        let json::Value::Object(mut members) = self.response.to_value() else { unreachable!() };
        let confidence = match self.confidence {
            Some(c) => json::Value::Float(c as f64),
            None => json::Value::Null,
        };
        members.push(("confidence".into(), confidence));
        members.push(("stop_reason".into(), json::Value::String(self.stop_reason.as_str().into())));
        members.push((
            "usage".into(),
            json::Value::Object(vec![
                ("prompt_tokens".into(), json::Value::Int(self.prompt_ids.len().to_string())),
                ("completion_tokens".into(), json::Value::Int(self.tokens.len().to_string())),
            ]),
        ));
        json::Value::Object(members)
    }
}

/// The model of one generation and its sequence state: the one place the generations meet.
// An engine holds exactly one `Net`, so the variants' size difference costs nothing.
#[allow(clippy::large_enum_variant)]
enum Net<'a> {
    V2 { model: v2::Model<'a>, state: v2::State },
    V3 { model: v3::Model<'a>, state: v3::State },
}

impl<'a> Net<'a> {
    fn load(container: Container<'a>, options: &LoadOptions) -> Result<Self> {
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

    fn info(&self) -> ModelInfo {
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

    fn reset(&mut self) {
        match self {
            Net::V2 { state, .. } => state.reset(),
            Net::V3 { state, .. } => state.reset(),
        }
    }

    fn kv_bytes(&self) -> usize {
        match self {
            Net::V2 { state, .. } => state.kv_bytes(),
            Net::V3 { state, .. } => state.kv_bytes(),
        }
    }

    fn position(&self) -> usize {
        match self {
            Net::V2 { state, .. } => state.position(),
            Net::V3 { state, .. } => state.position(),
        }
    }

    /// Runs `ids` after what the state holds, writing the logits after the last one.
    fn feed(&mut self, ids: &[u32], logits: &mut [f32]) -> Result<()> {
        match self {
            Net::V2 { model, state } => model.prefill(state, ids, logits),
            Net::V3 { model, state } => model.prefill(state, ids, logits),
        }
    }

    /// Runs `ids` after what the state holds, writing the logits after each of them.
    fn feed_rows(&mut self, ids: &[u32], rows: &mut [f32]) -> Result<()> {
        match self {
            Net::V2 { model, state } => model.prefill_rows(state, ids, rows),
            Net::V3 { model, state } => model.prefill_rows(state, ids, rows),
        }
    }

    /// A copy of where the sequence is, to come back to with [`Self::rewind`].
    fn mark(&self) -> NetMark {
        match self {
            Net::V2 { state, .. } => NetMark::V2(state.mark()),
            Net::V3 { state, .. } => NetMark::V3(state.mark()),
        }
    }

    fn rewind(&mut self, mark: &NetMark) {
        match (self, mark) {
            (Net::V2 { state, .. }, NetMark::V2(mark)) => state.rewind(mark),
            (Net::V3 { state, .. }, NetMark::V3(mark)) => state.rewind(mark),
            _ => unreachable!("a mark is only taken from this net"),
        }
    }

    /// The confidence head's logit over the whole sequence `ids` the state has consumed.
    fn confidence(&self, ids: &[u32]) -> Result<f32> {
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
enum NetMark {
    V2(v2::Mark),
    V3(v3::Mark),
}

/// A request in flight.
struct Turn {
    prompt: String,
    prompt_ids: Vec<u32>,
    tokens: Vec<u32>,
    budget: usize,
    sampler: Sampler,
    decoder: IncrementalDecoder,
    text: String,
    /// The last sampled token, not yet run through the model.
    unfed: Option<u32>,
    constraint: Option<Constraint>,
    /// Value search is on (see [`Request::value_search`]).
    value_search: bool,
    /// The value being written has been searched (so it is not searched again).
    value_searched: bool,
    /// Tokens a value search chose, still to be emitted.
    chosen: VecDeque<u32>,
    stop: Option<StopReason>,
}

pub struct Engine<'a> {
    net: Net<'a>,
    tokenizer: Tokenizer,
    info: ModelInfo,
    /// Logits after the last consumed token.
    logits: Vec<f32>,
    im_end: Option<u32>,
    /// Decoded bytes per token, built on the first constrained request.
    token_table: Option<TokenTable>,
    turn: Option<Turn>,
}

impl<'a> Engine<'a> {
    /// Opens a container (either generation, detected from its tag) and allocates one session.
    pub fn load(bytes: &'a [u8], options: &LoadOptions) -> Result<Self> {
        let container = container::parse(bytes)?;
        let tokenizer = Tokenizer::from_blob(container.tokenizer())?;
        let net = Net::load(container, options)?;
        let info = net.info();
        let im_end = tokenizer.piece_id(prompt::IM_END);
        Ok(Engine { net, tokenizer, logits: vec![0.0; info.logits_len], info, im_end, token_table: None, turn: None })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The exact prompt text a request renders to (tools unwrapped to the flat schema).
    pub fn render(&self, query: &str, tools_json: &str, system: Option<&str>) -> Result<String> {
        Ok(prompt::render_value(query, parse_tools(tools_json)?.as_ref(), system))
    }

    /// `[BOS] + encode(prompt)`: the ids a rendered prompt runs as.
    pub fn prompt_ids(&self, prompt: &str) -> Vec<u32> {
        let mut ids = vec![self.tokenizer.bos_id()];
        ids.extend(self.tokenizer.encode(prompt));
        ids
    }

    /// Forgets the sequence and any request in flight.
    pub fn reset(&mut self) {
        self.turn = None;
        self.net.reset();
    }

    /// KV-cache bytes this session holds.
    pub fn kv_bytes(&self) -> usize {
        self.net.kv_bytes()
    }

    /// Tokens the state has consumed.
    pub fn position(&self) -> usize {
        self.net.position()
    }

    /// Runs `ids` after what the state holds; the logits after the last one become current.
    fn feed(&mut self, ids: &[u32]) -> Result<()> {
        self.net.feed(ids, &mut self.logits)
    }

    /// Logits at every position of `ids` from a fresh state (row-major, `logits_len` wide).
    pub fn logits_for(&mut self, ids: &[u32]) -> Result<Vec<f32>> {
        self.reset();
        let len = ids.len().checked_mul(self.info.logits_len).ok_or(Error::ContextFull { needed: ids.len(), max: self.info.capacity })?;
        if ids.len() > self.info.capacity {
            return Err(Error::ContextFull { needed: ids.len(), max: self.info.capacity });
        }
        let mut rows = vec![0.0; len];
        let result = self.net.feed_rows(ids, &mut rows);
        self.reset();
        result.map(|()| rows)
    }

    /// Starts a request from a fresh sequence: renders, tokenizes and prefills the prompt.
    /// Returns the number of prompt tokens.
    pub fn start(&mut self, req: &Request) -> Result<usize> {
        let sampler = Sampler::new(req.temperature, req.top_k, req.top_p, req.seed)?;
        let tools = parse_tools(req.tools_json)?;
        if req.value_search && req.temperature != 0.0 {
            return Err(Error::InvalidArgument { name: "value_search", reason: "needs temperature 0 (it replaces greedy choice)" });
        }
        let constraint = match req.constrained || req.extractive || req.value_search {
            true => Some(Constraint::new(tools.as_ref().unwrap_or(&json::Value::Null), req.extractive.then_some(req.query))?),
            false => None,
        };
        if constraint.is_some() && self.token_table.is_none() {
            let stops: Vec<u32> = [Some(self.tokenizer.eos_id()), self.im_end].into_iter().flatten().collect();
            self.token_table = Some(TokenTable::new(&self.tokenizer, self.info.logits_len, &stops));
        }
        let prompt = prompt::render_value(req.query, tools.as_ref(), req.system);
        let prompt_ids = self.prompt_ids(&prompt);
        // Leave room for at least one generated token.
        if prompt_ids.len() >= self.info.capacity {
            return Err(Error::ContextFull { needed: prompt_ids.len() + 1, max: self.info.capacity });
        }
        self.reset();
        self.feed(&prompt_ids)?;
        let n = prompt_ids.len();
        self.turn = Some(Turn {
            prompt,
            prompt_ids,
            tokens: Vec::new(),
            budget: req.max_tokens,
            sampler,
            decoder: IncrementalDecoder::new(&self.tokenizer),
            text: String::new(),
            unfed: None,
            constraint,
            value_search: req.value_search,
            value_searched: false,
            chosen: VecDeque::new(),
            stop: if req.max_tokens == 0 { Some(StopReason::MaxTokens) } else { None },
        });
        Ok(n)
    }

    /// Generates the next token, or `None` once the request has stopped.
    pub fn next_token(&mut self) -> Result<Option<Token>> {
        let capacity = self.info.capacity;
        let position = self.position();
        let turn = self.turn.as_mut().ok_or(Error::InvalidArgument { name: "next_token", reason: "no request in flight" })?;
        if turn.stop.is_some() {
            return Ok(None);
        }
        if let Some(id) = turn.unfed {
            if position >= capacity {
                turn.stop = Some(StopReason::ContextFull);
                return Ok(None);
            }
            turn.unfed = None;
            self.feed(&[id])?;
        }
        let turn = self.turn.as_mut().expect("checked above");
        let in_value = turn.constraint.as_ref().is_some_and(Constraint::in_argument_value);
        if turn.value_search && in_value && !turn.value_searched {
            turn.value_searched = true;
            let chosen = self.search_value()?;
            self.turn.as_mut().expect("checked above").chosen.extend(chosen);
        }
        let turn = self.turn.as_mut().expect("checked above");
        let id = match turn.chosen.pop_front() {
            Some(id) => id,
            None => {
                if let (Some(constraint), Some(table)) = (&mut turn.constraint, &self.token_table) {
                    constraint.mask(table, &mut self.logits);
                }
                turn.sampler.sample(&self.logits)
            }
        };
        if let (Some(constraint), Some(table)) = (&mut turn.constraint, &self.token_table) {
            constraint.accept(table, id);
            if !constraint.in_argument_value() {
                turn.value_searched = false;
            }
        }
        turn.tokens.push(id);
        let stop = if id == self.tokenizer.eos_id() {
            Some(StopReason::Eos)
        } else if Some(id) == self.im_end {
            Some(StopReason::ImEnd)
        } else {
            None
        };
        let mut text = String::new();
        if stop.is_none() {
            turn.decoder.push(&self.tokenizer, id, &mut text);
            turn.text.push_str(&text);
        }
        turn.unfed = Some(id);
        turn.stop = stop.or(if turn.tokens.len() >= turn.budget { Some(StopReason::MaxTokens) } else { None });
        Ok(Some(Token { id, text }))
    }

    /// Stops the request in flight; the next [`Self::next_token`] returns `None`.
    pub fn abort(&mut self) {
        if let Some(turn) = &mut self.turn {
            turn.stop.get_or_insert(StopReason::Aborted);
        }
    }

    /// Ends the request: parses the completion and scores it with the confidence head.
    pub fn finish(&mut self) -> Result<Completion> {
        let mut turn = self.turn.take().ok_or(Error::InvalidArgument { name: "finish", reason: "no request in flight" })?;
        turn.decoder.finish(&mut turn.text);
        let stop_reason = turn.stop.unwrap_or(StopReason::Aborted);
        let mut confidence = None;
        if self.info.heads.contains(&HeadKind::Confidence) {
            // The head scores the whole exchange, so the last sampled token runs too.
            if let Some(id) = turn.unfed.filter(|_| self.position() < self.info.capacity) {
                self.feed(&[id])?;
            }
            let mut exchange = turn.prompt_ids.clone();
            exchange.extend_from_slice(&turn.tokens);
            exchange.truncate(self.position());
            let z = self.net.confidence(&exchange)?;
            confidence = Some(1.0 / (1.0 + libm::expf(-z)));
        }
        Ok(Completion {
            response: response::parse(&turn.text),
            prompt: turn.prompt,
            prompt_ids: turn.prompt_ids,
            tokens: turn.tokens,
            confidence,
            stop_reason,
        })
    }

    /// `start`, `next_token` until it stops (or `on_token` returns false), `finish`.
    pub fn generate(&mut self, req: &Request, mut on_token: impl FnMut(&Token) -> bool) -> Result<Completion> {
        self.start(req)?;
        while let Some(token) = self.next_token()? {
            if !on_token(&token) {
                self.abort();
            }
        }
        self.finish()
    }
}

/// The tool list of a request, OpenAI-style entries unwrapped (`None`: no tool list).
fn parse_tools(tools_json: &str) -> Result<Option<json::Value>> {
    if tools_json.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(prompt::flat_tools(json::parse(tools_json)?)))
}
