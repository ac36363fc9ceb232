//! The session: where the model generations meet the text layer.
//!
//! An [`Engine`] owns one model (borrowing the container bytes), its tokenizer and one
//! sequence state. A request goes `start` (render and encode the prompt, reuse what the state
//! holds of it, prefill the rest) -> `next_token` per token (the stages of decode.rs: close or
//! search, mask, sample, accept, stop) -> `finish` (parse the completion, run the confidence
//! head); the request in flight is a [`Turn`] (turn.rs). Generation is step-wise so a host that must stay responsive — a Web
//! Worker waiting for an abort message — can yield between steps: `start` is also `begin` and
//! then `prefill` chunk by chunk (pkg/engine/generate.js drives it so); [`Engine::generate`] is
//! the same loop for hosts that need not.
//!
//! The core has no clock: callers time `start` (prefill) and `next_token` (decode) themselves.
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::constrained::TokenTable;
use crate::container;
use crate::context;
use crate::grounding;
use crate::json;
use crate::prompt;
use crate::response;
use crate::sampling::Sampler;
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

use super::load_options::{Backend, GpuKernels, LoadOptions};
use super::net::{self, Net};
use super::prefix::PrefixCache;
use super::request::{Completion, Request, StopReason, Token};
use super::turn::{self, Output, Prompt, Steer, Turn};
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

// An engine moves to the thread that hosts it (a worker, a fuzz harness, a server).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Engine<'static>>();
};

pub struct Engine<'a> {
    pub(super) net: Box<dyn Net + 'a>,
    pub(super) tokenizer: Tokenizer,
    pub(super) info: ModelInfo,
    /// Logits after the last consumed token.
    pub(super) logits: Vec<f32>,
    pub(super) im_end: Option<u32>,
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

    /// The GPU kernel variant the forward pass runs on (as loaded: the option, else
    /// `NEEDLE_GPU_KERNELS`, else plain); `None` on the CPU.
    pub fn device_kernels(&self) -> Option<GpuKernels> {
        self.net.device_kernels()
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
        let constraint = self.constraint(req, tools.as_ref())?;
        // Render and encode.
        let dated = req
            .date
            .map(|date| grounding::with_date_fact(req.system.unwrap_or(""), date))
            .transpose()?;
        let system = dated.as_deref().or(req.system);
        let rendered = prompt::render_conversation(req.turns, req.query, tools.as_ref(), system)?;
        let allow = req.allow_control_tokens;
        let ids = context::encode_prompt(&self.tokenizer, &rendered, allow, self.info.capacity)?;
        self.turn = None;
        let cached = self.reuse_prefix(&rendered, allow, &ids);
        let n = ids.len();
        self.turn = Some(Turn {
            prompt: Prompt { text: rendered.text, ids, cached, prefilled: false },
            steer: Steer::new(constraint, req.value_search),
            out: Output::new(req.max_tokens, sampler, &self.tokenizer),
            grounds: turn::grounds(req, tools, system),
        });
        Ok(n)
    }

    /// Runs at most `chunk` more prompt ids of the request [`Self::begin`] started; true once
    /// the whole prompt has run. A failure ends the request.
    pub fn prefill(&mut self, chunk: usize) -> Result<bool> {
        let turn = self.turn.as_mut().ok_or(no_request("prefill"))?;
        let prompt = &mut turn.prompt;
        if prompt.prefilled {
            return Ok(true);
        }
        match self.prefix.step(&mut *self.net, &prompt.ids, chunk, &mut self.logits) {
            Ok(done) => {
                prompt.prefilled = done;
                Ok(done)
            }
            Err(e) => {
                self.turn = None;
                Err(e)
            }
        }
    }

    /// Generates the next token, or `None` once the request has stopped: the rest of the
    /// prefill, then the stages of decode.rs.
    pub fn next_token(&mut self) -> Result<Option<Token>> {
        let turn = self.turn.as_ref().ok_or(no_request("next_token"))?;
        if turn.out.stop.is_some() {
            return Ok(None);
        }
        while !self.prefill(usize::MAX)? {}
        // Out of the engine while the stages run, which borrow both; back even on a failure.
        let mut turn = self.turn.take().ok_or(no_request("next_token"))?;
        let token = self.decode(&mut turn);
        self.turn = Some(turn);
        token
    }

    /// Stops the request in flight; the next [`Self::next_token`] returns `None`.
    pub fn abort(&mut self) {
        if let Some(turn) = &mut self.turn {
            turn.out.stop.get_or_insert(StopReason::Aborted);
        }
    }

    /// Ends the request: parses the completion and scores it with the confidence head.
    pub fn finish(&mut self) -> Result<Completion> {
        let Turn { prompt, mut out, grounds, .. } = self.turn.take().ok_or(no_request("finish"))?;
        out.decoder.finish(&mut out.text);
        let stop_reason = out.stop.unwrap_or(StopReason::Aborted);
        let mut confidence = None;
        // A request aborted during its prefill has no completion to score.
        if prompt.prefilled && self.info.heads.contains(&HeadKind::Confidence) {
            // The head scores the whole exchange, so the last sampled token runs too.
            if let Some(id) = out.unfed.filter(|_| self.position() < self.info.capacity) {
                self.feed(&[id])?;
            }
            let mut exchange = prompt.ids.clone();
            exchange.extend_from_slice(&out.tokens);
            exchange.truncate(self.position());
            let z = self.net.confidence(&exchange)?;
            confidence = Some(1.0 / (1.0 + libm::expf(-z)));
        }
        let response = response::parse(&out.text);
        Ok(Completion {
            validation: grounds.validate(&response.function_calls),
            response,
            prompt: prompt.text,
            prompt_ids: prompt.ids,
            cached_tokens: prompt.cached,
            tokens: out.tokens,
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

/// The refusal of a call that needs a request in flight.
fn no_request(name: &'static str) -> Error {
    Error::InvalidArgument { name, reason: "no request in flight" }
}

/// The tool list of a request, OpenAI-style entries unwrapped (`None`: no tool list).
pub(super) fn parse_tools(tools_json: &str) -> Result<Option<json::Value>> {
    if tools_json.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(prompt::flat_tools(json::parse(tools_json)?)))
}
