//! `Session`: one loaded model and its per-sequence state, as a JS class.
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;

use wasm_bindgen::prelude::*;

use super::js::{error, Obj};
use crate::json::{self, Value};
use crate::prompt::{Role, Turn};
use crate::session::{Engine, HeadKind, KvPrecision, LoadOptions, Numerics, Request};
use crate::tokenizer::Span;
use crate::{Error, Result};

/// A model loaded from `.cact` bytes (generation detected from the container tag).
///
/// The engine borrows the container bytes (weights are zero-copy views), so the session owns
/// them. They are held as a raw pointer (a leaked `Box`) rather than a `Box` field: moving a
/// `Box` asserts unique access to its allocation, which the engine's shared borrow would violate
/// every time wasm-bindgen moves the session.
///
/// Counts and the seed arrive as JS numbers (f64) and are checked here, so a negative, fractional
/// or huge value is an `invalid_argument` error rather than a silently wrapped integer.
#[wasm_bindgen]
pub struct Session {
    /// Built over `bytes`; dropped in `Drop` before they are freed.
    pub(super) engine: ManuallyDrop<Engine<'static>>,
    /// Owned container bytes (a leaked `Box`), never written and never moved.
    bytes: NonNull<[u8]>,
}

#[wasm_bindgen]
impl Session {
    /// Parses the container and builds the engine. `kv`: "f32" | "int8" (default: the
    /// container's KV width); `numerics`: "exact" | "deploy"; `layers`: depth-ladder rung;
    /// `context`: tokens the session holds (default: the model's context).
    #[wasm_bindgen(constructor)]
    pub fn new(
        bytes: Box<[u8]>,
        kv: Option<String>,
        numerics: Option<String>,
        layers: Option<f64>,
        context: Option<f64>,
    ) -> Result<Session, JsValue> {
        console_error_panic_hook::set_once();
        let opts = load_options(kv.as_deref(), numerics.as_deref(), layers, context).map_err(error)?;
        let bytes = NonNull::from(Box::leak(bytes));
        match Engine::load(owned(bytes), &opts) {
            Ok(engine) => Ok(Session { engine: ManuallyDrop::new(engine), bytes }),
            Err(e) => {
                // SAFETY: `bytes` came from Box::leak above and the failed load left no borrow.
                drop(unsafe { Box::from_raw(bytes.as_ptr()) });
                Err(error(e))
            }
        }
    }

    /// Rebuilds the engine over the same bytes with other load options (state starts empty).
    pub fn reconfigure(
        &mut self,
        kv: Option<String>,
        numerics: Option<String>,
        layers: Option<f64>,
        context: Option<f64>,
    ) -> Result<(), JsValue> {
        let opts = load_options(kv.as_deref(), numerics.as_deref(), layers, context).map_err(error)?;
        let engine = Engine::load(owned(self.bytes), &opts).map_err(error)?;
        *self.engine = engine;
        Ok(())
    }

    /// Model facts: generation, geometry, depth, capacity, KV precision, numerics, heads.
    pub fn info(&self) -> JsValue {
        let i = self.engine.info();
        let has = |k: HeadKind| i.heads.contains(&k);
        let heads = Obj::new()
            .set("confidence", has(HeadKind::Confidence))
            .set("embedding", has(HeadKind::Embedding))
            .set("router", has(HeadKind::Router))
            .build();
        Obj::new()
            .set("generation", i.generation)
            .set("vocab", i.vocab as u32)
            .set("logits_len", i.logits_len as u32)
            .set("d_model", i.d_model as u32)
            .set("num_layers", i.num_layers as u32)
            .set("depth", i.depth as u32)
            .set("max_seq_len", i.max_seq_len as u32)
            .set("capacity", i.capacity as u32)
            .set("kv", match i.kv {
                KvPrecision::F32 => "f32",
                KvPrecision::Int8 => "int8",
            })
            .set("numerics", match i.numerics {
                Numerics::Exact => "exact",
                Numerics::Deploy => "deploy",
            })
            .set("heads", heads)
            .build()
    }

    /// The prompt text the model sees for this query and tool JSON.
    pub fn render(&self, query: &str, tools_json: &str, system: Option<String>) -> Result<String, JsValue> {
        self.engine.render(query, tools_json, system.as_deref()).map_err(error)
    }

    /// Token ids of `text` (no BOS), at most the session's capacity of them: longer text is
    /// refused (`context_full`), from its length alone where it cannot fit.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, JsValue> {
        let spans = [Span::template(text)];
        self.engine.tokenizer().encode_spans(&spans, self.engine.info().capacity).map_err(error)
    }

    /// Text of token ids.
    pub fn decode(&self, ids: &[u32]) -> String {
        self.engine.tokenizer().decode(ids)
    }

    /// Renders, tokenizes and prefills a request; returns the prompt length in tokens. What the
    /// state already holds of the prompt is reused (a fresh session's result, bit for bit).
    ///
    /// `turns` (JSON text, optional): the conversation so far, oldest first,
    /// `[{"role": "user" | "assistant" | "tool", "content": "…"}]`, rendered before `query`
    /// (see `prompt::render_conversation`); an assistant turn's content is a previous
    /// result's `text`, a tool turn's the JSON of the results. `date` (optional): the date
    /// fact's value, `"YYYY-MM-DD Ddd HH:MM"` on the host's clock, prefixed to the system text
    /// as `date: …` unless it already has one (upstream's `auto_date`).
    ///
    /// `require_call`: constrained, with the refusal `[]` masked (OpenAI's `tool_choice:
    /// "required"`).
    ///
    /// `finish` then returns the envelope with `validation: {ungrounded: ["tool.path"],
    /// negation}` and `usage.cached_tokens` (prompt tokens reused).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        query: &str,
        tools_json: &str,
        system: Option<String>,
        max_tokens: f64,
        temperature: f32,
        seed: f64,
        top_k: f64,
        top_p: f32,
        constrained: bool,
        extractive: bool,
        value_search: bool,
        turns: Option<String>,
        date: Option<String>,
        require_call: bool,
        allow_control_tokens: bool,
    ) -> Result<u32, JsValue> {
        let history = turns.as_deref().map(parse_turns).transpose().map_err(error)?.unwrap_or_default();
        let turns: Vec<Turn> = history.iter().map(|(role, text)| Turn { role: *role, text }).collect();
        let req = Request {
            query,
            turns: &turns,
            tools_json,
            system: system.as_deref(),
            date: date.as_deref(),
            max_tokens: count("max_tokens", max_tokens).map_err(error)?,
            temperature,
            seed: seed_from_js(seed).map_err(error)?,
            top_k: count("top_k", top_k).map_err(error)?,
            top_p,
            constrained,
            extractive,
            value_search,
            require_call,
            allow_control_tokens,
        };
        self.engine.start(&req).map(|n| n as u32).map_err(error)
    }

    /// The next token as `{id, text}`, or `undefined` once generation has stopped.
    #[wasm_bindgen(js_name = next)]
    pub fn next_token(&mut self) -> Result<JsValue, JsValue> {
        Ok(match self.engine.next_token().map_err(error)? {
            Some(t) => Obj::new().set("id", t.id).set("text", t.text).build(),
            None => JsValue::UNDEFINED,
        })
    }

    /// Stops the current generation; `finish` then reports `stop_reason: "aborted"`.
    pub fn abort(&mut self) {
        self.engine.abort();
    }

    /// Ends the generation. Returns the same JSON envelope as `needle run --json` (upstream's
    /// response keys, `confidence`, `stop_reason`, `usage`) with the generated `tokens` — as
    /// text, so both hosts print numbers identically.
    pub fn finish(&mut self) -> Result<String, JsValue> {
        let c = self.engine.finish().map_err(error)?;
        let Value::Object(mut members) = c.to_value() else {
            return Err(error(Error::Unsupported { what: "a completion that is not a JSON object" }));
        };
        let tokens = c.tokens.iter().map(|&t| Value::Int(t.to_string())).collect();
        members.push(("tokens".into(), Value::Array(tokens)));
        Ok(Value::Object(members).to_json())
    }

    /// Logits after each token of `ids` from a fresh state, `ids.len() x logits_len` row-major.
    pub fn logits(&mut self, ids: &[u32]) -> Result<Vec<f32>, JsValue> {
        self.engine.logits_for(ids).map_err(error)
    }

    /// Bytes the KV cache holds now (it grows with the sequence up to the session's capacity).
    pub fn kv_bytes(&self) -> f64 {
        self.engine.kv_bytes() as f64
    }

    /// Forgets the sequence (KV cache and position).
    pub fn reset(&mut self) {
        self.engine.reset();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: dropped once, here; nothing uses the engine afterwards.
        unsafe { ManuallyDrop::drop(&mut self.engine) };
        // SAFETY: `bytes` came from Box::leak in `new`; the engine that borrowed it is gone.
        drop(unsafe { Box::from_raw(self.bytes.as_ptr()) });
    }
}

/// Headroom [`reserve`] adds to the container for the engine's own first allocations.
const LOAD_HEADROOM: usize = 16 << 20;

/// Grows the heap once, before a container of `container_bytes` is copied in: the allocator then
/// carves the copy and the engine's first allocations from one free block. Without it linear
/// memory grows step by step during the load, and engines that copy the whole memory on each
/// `memory.grow` (V8 where it cannot reserve address space) spend most of a load doing that.
/// Best effort: a heap that cannot grow that far is left as it is (the load then reports it).
#[wasm_bindgen]
pub fn reserve(container_bytes: f64) {
    let Ok(n) = count("container_bytes", container_bytes) else { return };
    let mut block: Vec<u8> = Vec::new();
    if block.try_reserve_exact(n.saturating_add(LOAD_HEADROOM)).is_ok() {
        // Keeps the allocation from being optimised away; freeing it returns it to the heap.
        core::hint::black_box(&mut block);
    }
}

/// The session's bytes with the lifetime the engine type needs.
fn owned(bytes: NonNull<[u8]>) -> &'static [u8] {
    // SAFETY: the one lifetime extension. The allocation is owned by the `Session` (or freed by
    // `new` only after a failed load), is never written, and is freed in `Drop` strictly after
    // the engine borrowing it has been dropped; so the reference outlives no use of it.
    unsafe { bytes.as_ref() }
}

fn load_options(kv: Option<&str>, numerics: Option<&str>, layers: Option<f64>, context: Option<f64>) -> Result<LoadOptions> {
    let kv = match kv {
        None => None,
        Some("f32") => Some(KvPrecision::F32),
        Some("int8") => Some(KvPrecision::Int8),
        Some(_) => return Err(Error::InvalidArgument { name: "kv", reason: "expected \"f32\" or \"int8\"" }),
    };
    let numerics = match numerics {
        None | Some("exact") => Numerics::Exact,
        Some("deploy") => Numerics::Deploy,
        Some(_) => return Err(Error::InvalidArgument { name: "numerics", reason: "expected \"exact\" or \"deploy\"" }),
    };
    let layers = layers.map(|v| count("layers", v)).transpose()?;
    let max_tokens = context.map(|v| count("context", v)).transpose()?;
    Ok(LoadOptions { kv, numerics, layers, max_tokens })
}

/// A conversation's turns from `[{"role", "content"}]` JSON.
fn parse_turns(text: &str) -> Result<Vec<(Role, String)>> {
    let bad = |reason| Error::InvalidArgument { name: "turns", reason };
    let value = json::parse(text)?;
    let items = value.as_array().ok_or(bad("expected an array of {role, content}"))?;
    items
        .iter()
        .map(|item| {
            let role = match item.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("tool") => Role::Tool,
                _ => return Err(bad("role must be \"user\", \"assistant\" or \"tool\"")),
            };
            let content = item.get("content").and_then(Value::as_str).ok_or(bad("content must be a string"))?;
            Ok((role, String::from(content)))
        })
        .collect()
}

/// A JS number used as a count: a whole number from 0 to 2^32 - 1.
fn count(name: &'static str, v: f64) -> Result<usize> {
    if (0.0..=u32::MAX as f64).contains(&v) && v == libm::trunc(v) {
        Ok(v as usize)
    } else {
        Err(Error::InvalidArgument { name, reason: "expected a whole number from 0 to 2^32-1" })
    }
}

/// A JS number used as a seed: a whole number it represents exactly (0 to 2^53 - 1).
fn seed_from_js(v: f64) -> Result<u64> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    if (0.0..=MAX_SAFE_INTEGER).contains(&v) && v == libm::trunc(v) {
        Ok(v as u64)
    } else {
        Err(Error::InvalidArgument { name: "seed", reason: "expected a whole number from 0 to 2^53-1" })
    }
}
