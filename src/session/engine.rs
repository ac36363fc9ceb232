//! The session: where the model generations meet the text layer.
//!
//! An [`Engine`] owns one model (borrowing the container bytes), its tokenizer and one
//! sequence state. A request goes `start` (render the prompt, tokenize, prefill) ->
//! `next_token` per token (sample, stream the decoded piece) -> `finish` (parse the completion, run
//! the confidence head). Generation is step-wise so a host that must stay responsive — a Web
//! Worker waiting for an abort message — can yield between steps: `start` is also `begin` and
//! then `prefill` chunk by chunk (pkg/engine/generate.js drives it so); [`Engine::generate`] is
//! the same loop for hosts that need not.
//!
//! The core has no clock: callers time `start` (prefill) and `next_token` (decode) themselves.
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::constrained::{Constraint, TokenTable, CLOSING_MARGIN};
use crate::container;
use crate::context;
use crate::grounding::{self, Grounds};
use crate::json;
use crate::prompt;
use crate::response;
use crate::sampling::Sampler;
use crate::tokenizer::{IncrementalDecoder, Tokenizer};
use crate::{Error, Result};

use super::load_options::{Backend, LoadOptions};
use super::net::{self, Net};
use super::prefix::{self, PrefixCache};
use super::request::{Completion, Request, StopReason, Token};
use super::unemittable::Unemittable;
use super::{HeadKind, KvPrecision, Numerics};

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
    /// Where the forward pass runs.
    pub backend: Backend,
}

/// A request in flight.
pub(super) struct Turn {
    prompt: String,
    prompt_ids: Vec<u32>,
    /// Leading prompt ids the state already held (see [`super::prefix`]).
    cached: usize,
    /// Every prompt id has run (see [`Engine::prefill`]).
    prefilled: bool,
    tokens: Vec<u32>,
    budget: usize,
    sampler: Sampler,
    decoder: IncrementalDecoder,
    text: String,
    /// The last sampled token, not yet run through the model.
    unfed: Option<u32>,
    pub(super) constraint: Option<Constraint>,
    /// Value search is on (see [`Request::value_search`]).
    value_search: bool,
    /// The value being written has been searched (so it is not searched again).
    value_searched: bool,
    /// Tokens a value search or the closing of a required call chose, still to be emitted.
    chosen: VecDeque<u32>,
    /// The required call is being closed (see [`crate::constrained::Constraint::closing`]).
    closing: bool,
    /// Tokens of the shortest whole call, once known.
    reserve: Option<usize>,
    stop: Option<StopReason>,
    /// What the completion's calls are checked against.
    grounds: Grounds,
}

// An engine moves to the thread that hosts it (a worker, a fuzz harness, a server).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Engine<'static>>();
};

pub struct Engine<'a> {
    pub(super) net: Box<dyn Net + 'a>,
    tokenizer: Tokenizer,
    pub(super) info: ModelInfo,
    /// Logits after the last consumed token.
    pub(super) logits: Vec<f32>,
    im_end: Option<u32>,
    /// Ids no decoding mode may pick.
    pub(super) never: Unemittable,
    /// Decoded bytes per token, built on the first constrained request.
    pub(super) token_table: Option<TokenTable>,
    pub(super) turn: Option<Turn>,
    pub(super) prefix: PrefixCache,
    /// The container bytes and their SHA-256 once taken (what a snapshot names).
    pub(super) model: &'a [u8],
    pub(super) model_sha256: Option<[u8; 32]>,
}

impl<'a> Engine<'a> {
    /// Opens a container (either generation, detected from its tag) and allocates one session.
    pub fn load(bytes: &'a [u8], options: &LoadOptions) -> Result<Self> {
        let container = container::parse(bytes)?;
        let tokenizer = Tokenizer::from_blob(container.tokenizer())?;
        let net = net::load(bytes, container, options)?;
        let info = net.info();
        let im_end = tokenizer.piece_id(prompt::IM_END);
        let never = Unemittable::new(&tokenizer);
        Ok(Engine {
            net,
            tokenizer,
            logits: vec![0.0; info.logits_len],
            info,
            im_end,
            never,
            token_table: None,
            turn: None,
            prefix: PrefixCache::default(),
            model: bytes,
            model_sha256: None,
        })
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
        self.prefix.clear();
    }

    /// KV-cache bytes this session holds.
    pub fn kv_bytes(&self) -> usize {
        self.net.kv_bytes()
    }

    /// Device (GPU) memory the forward pass holds: every buffer, the weights included; 0 when
    /// it runs on the CPU.
    pub fn device_bytes(&self) -> u64 {
        self.net.device_bytes()
    }

    /// The GPU adapter the forward pass runs on (name, driver backend, type); `None` on the CPU.
    pub fn device_name(&self) -> Option<&str> {
        self.net.device_name()
    }

    /// Tokens the state has consumed.
    pub fn position(&self) -> usize {
        self.net.position()
    }

    /// Runs `ids` after what the state holds; the logits after the last one become current.
    pub(super) fn feed(&mut self, ids: &[u32]) -> Result<()> {
        self.net.feed(ids, &mut self.logits)?;
        self.prefix.push(ids);
        Ok(())
    }

    /// The logits after the last token the state consumed (after `start`: what the first
    /// completion token is sampled from).
    pub fn logits(&self) -> &[f32] {
        &self.logits
    }

    /// Logits at every position of `ids` from a fresh state (row-major, `logits_len` wide).
    pub fn logits_for(&mut self, ids: &[u32]) -> Result<Vec<f32>> {
        self.reset();
        let len = ids
            .len()
            .checked_mul(self.info.logits_len)
            .ok_or(Error::ContextFull { needed: ids.len(), max: self.info.capacity })?;
        if ids.len() > self.info.capacity {
            return Err(Error::ContextFull { needed: ids.len(), max: self.info.capacity });
        }
        let mut rows = vec![0.0; len];
        let result = self.net.feed_rows(ids, &mut rows);
        self.reset();
        result.map(|()| rows)
    }

    /// Starts a request: renders the conversation (earlier turns, then the query), tokenizes it
    /// and prefills what the state does not already hold (see [`super::prefix`]); the result is
    /// a fresh sequence's, bit for bit. Returns the number of prompt tokens.
    pub fn start(&mut self, req: &Request) -> Result<usize> {
        let n = self.begin(req)?;
        while !self.prefill(usize::MAX)? {}
        Ok(n)
    }

    /// [`Self::start`] without the prefill: [`Self::prefill`] then runs it in chunks, so a host
    /// that must stay responsive (a Web Worker waiting for an abort) can look between them.
    /// `next_token` runs what is left of it.
    pub fn begin(&mut self, req: &Request) -> Result<usize> {
        let sampler = Sampler::new(req.temperature, req.top_k, req.top_p, req.seed)?;
        // Text that cannot fit is refused before it is parsed, rendered or tokenized.
        let verbatim =
            req.turns.iter().map(|t| t.text).chain([req.query, req.system.unwrap_or("")]);
        context::check_request(&self.tokenizer, self.info.capacity, verbatim, req.tools_json)?;
        let tools = parse_tools(req.tools_json)?;
        if req.value_search && req.temperature != 0.0 {
            return Err(Error::InvalidArgument {
                name: "value_search",
                reason: "needs temperature 0 (it replaces greedy choice)",
            });
        }
        let constrain = req.constrained
            || req.extractive
            || req.value_search
            || req.require_call
            || req.full_schema;
        let mut constraint = match constrain {
            true => Some(Constraint::new(
                tools.as_ref().unwrap_or(&json::Value::Null),
                req.extractive.then_some(req.query),
            )?),
            false => None,
        };
        if let (Some(c), true) = (constraint.as_mut(), req.require_call) {
            c.require_call();
        }
        if let (Some(c), true) = (constraint.as_mut(), req.full_schema) {
            c.full_schema(tools.as_ref().unwrap_or(&json::Value::Null))?;
        }
        if constraint.is_some() && self.token_table.is_none() {
            let stops: Vec<u32> =
                [Some(self.tokenizer.eos_id()), self.im_end].into_iter().flatten().collect();
            self.token_table = Some(TokenTable::new(&self.tokenizer, self.info.logits_len, &stops));
        }
        let dated = req
            .date
            .map(|date| grounding::with_date_fact(req.system.unwrap_or(""), date))
            .transpose()?;
        let system = dated.as_deref().or(req.system);
        let rendered = prompt::render_conversation(req.turns, req.query, tools.as_ref(), system)?;
        let allow = req.allow_control_tokens;
        let prompt_ids =
            context::encode_prompt(&self.tokenizer, &rendered, allow, self.info.capacity)?;
        self.turn = None;
        // Where the next request is likely to part from this one: after the tools, and
        // before the newest message; one token earlier, as the text that follows may join
        // the last token there.
        let boundaries = [rendered.head, rendered.newest].map(|at| {
            prefix::common_prefix(
                &context::encode_prefix(&self.tokenizer, &rendered, allow, at),
                &prompt_ids,
            )
            .saturating_sub(1)
        });
        let cached = self.prefix.begin(&mut *self.net, &prompt_ids, &boundaries);
        let n = prompt_ids.len();
        self.turn = Some(Turn {
            prompt: rendered.text,
            prompt_ids,
            cached,
            prefilled: false,
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
            closing: false,
            reserve: None,
            stop: if req.max_tokens == 0 { Some(StopReason::MaxTokens) } else { None },
            grounds: Grounds {
                tools,
                // The user-side texts; the newest last (an empty query adds no turn).
                inputs: req
                    .turns
                    .iter()
                    .filter(|t| t.role != prompt::Role::Assistant)
                    .map(|t| t.text)
                    .chain(Some(req.query).filter(|q| !q.is_empty() || req.turns.is_empty()))
                    .map(String::from)
                    .collect(),
                system: system.unwrap_or("").into(),
            },
        });
        Ok(n)
    }

    /// Runs at most `chunk` more prompt ids of the request [`Self::begin`] started; true once
    /// the whole prompt has run. A failure ends the request.
    pub fn prefill(&mut self, chunk: usize) -> Result<bool> {
        let turn = self
            .turn
            .as_mut()
            .ok_or(Error::InvalidArgument { name: "prefill", reason: "no request in flight" })?;
        if turn.prefilled {
            return Ok(true);
        }
        match self.prefix.step(&mut *self.net, &turn.prompt_ids, chunk, &mut self.logits) {
            Ok(done) => {
                turn.prefilled = done;
                Ok(done)
            }
            Err(e) => {
                self.turn = None;
                Err(e)
            }
        }
    }

    /// Generates the next token, or `None` once the request has stopped.
    pub fn next_token(&mut self) -> Result<Option<Token>> {
        let capacity = self.info.capacity;
        let turn = self
            .turn
            .as_ref()
            .ok_or(Error::InvalidArgument { name: "next_token", reason: "no request in flight" })?;
        if turn.stop.is_some() {
            return Ok(None);
        }
        while !self.prefill(usize::MAX)? {}
        let position = self.position();
        let turn = self.turn.as_mut().expect("checked above");
        if let Some(id) = turn.unfed {
            if position >= capacity {
                turn.stop = Some(StopReason::ContextFull);
                return Ok(None);
            }
            turn.unfed = None;
            self.feed(&[id])?;
        }
        let turn = self.turn.as_mut().expect("checked above");
        // A required call is closed while the budget still holds its closing, and room for
        // the model to open one more call first (the largest step the closing can grow by).
        if let (false, Some(constraint), Some(table)) =
            (turn.closing, &turn.constraint, &self.token_table)
        {
            let left = turn
                .budget
                .saturating_sub(turn.tokens.len())
                .min(capacity.saturating_sub(self.net.position()) + 1);
            let reserve = *turn.reserve.get_or_insert_with(|| {
                constraint.whole_call(&self.tokenizer, table).map_or(0, |c| c.len())
            });
            if let Some(close) = constraint
                .closing(&self.tokenizer, table)
                .filter(|c| c.len() + reserve + CLOSING_MARGIN >= left)
            {
                turn.chosen = close.into();
                turn.closing = true;
            }
        }
        let in_value = turn.constraint.as_ref().is_some_and(Constraint::in_argument_value);
        if turn.value_search && in_value && !turn.value_searched && !turn.closing {
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
                self.never.mask(&mut self.logits);
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
        turn.stop = stop.or(if turn.tokens.len() >= turn.budget {
            Some(StopReason::MaxTokens)
        } else {
            None
        });
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
        let mut turn = self
            .turn
            .take()
            .ok_or(Error::InvalidArgument { name: "finish", reason: "no request in flight" })?;
        turn.decoder.finish(&mut turn.text);
        let stop_reason = turn.stop.unwrap_or(StopReason::Aborted);
        let mut confidence = None;
        // A request aborted during its prefill has no completion to score.
        if turn.prefilled && self.info.heads.contains(&HeadKind::Confidence) {
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
        let response = response::parse(&turn.text);
        Ok(Completion {
            validation: turn.grounds.validate(&response.function_calls),
            response,
            prompt: turn.prompt,
            prompt_ids: turn.prompt_ids,
            cached_tokens: turn.cached,
            tokens: turn.tokens,
            confidence,
            stop_reason,
        })
    }

    /// `start`, `next_token` until it stops (or `on_token` returns false), `finish`.
    pub fn generate(
        &mut self,
        req: &Request,
        mut on_token: impl FnMut(&Token) -> bool,
    ) -> Result<Completion> {
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
pub(super) fn parse_tools(tools_json: &str) -> Result<Option<json::Value>> {
    if tools_json.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(prompt::flat_tools(json::parse(tools_json)?)))
}
