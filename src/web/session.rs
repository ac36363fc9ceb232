//! `Session`: one loaded model and its per-sequence state, as a JS class.
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;

use wasm_bindgen::prelude::*;

use super::js::{error, Obj};
use crate::json;
use crate::session::{self, Engine, HeadKind, KvPrecision, LoadOptions, Numerics};
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
    /// The `gpu` variant's staged calls and device (web/suspend.rs).
    #[cfg(feature = "gpu")]
    pub(super) gpu: super::suspend::Calls,
}

#[wasm_bindgen]
impl Session {
    /// Parses the container and builds the engine. `options`: the load options object as JSON
    /// text, `{"kv": "f32" | "int8", "numerics": "exact" | "deploy", "layers": N, "context": N}`
    /// (`session::LOAD_OPTIONS`; omitted: the container's own choices); an unknown name or a
    /// mistyped value is `invalid_argument`.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: Box<[u8]>, options: Option<String>) -> Result<Session, JsValue> {
        console_error_panic_hook::set_once();
        let opts = load_options(options.as_deref()).map_err(error)?;
        let bytes = NonNull::from(Box::leak(bytes));
        match Engine::load(owned(bytes), &opts) {
            Ok(engine) => Ok(Session {
                engine: ManuallyDrop::new(engine),
                bytes,
                #[cfg(feature = "gpu")]
                gpu: Default::default(),
            }),
            Err(e) => {
                // SAFETY: `bytes` came from Box::leak above and the failed load left no borrow.
                drop(unsafe { Box::from_raw(bytes.as_ptr()) });
                Err(error(e))
            }
        }
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
            .set(
                "kv",
                match i.kv {
                    KvPrecision::F32 => "f32",
                    KvPrecision::Int8 => "int8",
                },
            )
            .set(
                "numerics",
                match i.numerics {
                    Numerics::Exact => "exact",
                    Numerics::Deploy => "deploy",
                },
            )
            .set("heads", heads)
            .build()
    }

    /// The prompt text the model sees for this query and tool JSON.
    pub fn render(
        &self,
        query: &str,
        tools_json: &str,
        system: Option<String>,
    ) -> Result<String, JsValue> {
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

    /// Stops the current generation; `finish` then reports `stop_reason: "aborted"`.
    pub fn abort(&mut self) {
        self.engine.abort();
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

impl Session {
    /// Refuses a request too large for the JSON parser ([`json::MAX_INPUT`]) as `context_full`
    /// when its prompt cannot fit either: the caller sent a long query, not bad JSON. Past a
    /// few option names and numbers a request is prompt text (query, system, tools, turns),
    /// each byte of it at most 6 bytes of JSON (`\u00XX`).
    pub(super) fn fits(&self, request: &str) -> Result<()> {
        let (capacity, needed) =
            (self.engine.info().capacity, self.engine.tokenizer().min_tokens(request.len() / 6));
        if request.len() > json::MAX_INPUT && needed > capacity {
            return Err(Error::ContextFull { needed, max: capacity });
        }
        Ok(())
    }

    /// The container the session was loaded from.
    #[cfg(feature = "gpu")]
    pub(super) fn container_bytes(&self) -> &[u8] {
        owned(self.bytes)
    }

    /// Rebuilds the engine over the same bytes with `opts` (the state starts empty).
    pub(super) fn rebuild(&mut self, opts: &LoadOptions) -> Result<()> {
        *self.engine = Engine::load(owned(self.bytes), opts)?;
        Ok(())
    }

    /// [`Session::rebuild`] where the engine runs now: on the GPU once the gpu build's `open`
    /// put it there (web/suspend.rs).
    pub(super) fn reload(&mut self, opts: LoadOptions) -> Result<()> {
        #[cfg(feature = "gpu")]
        if self.gpu.on_gpu.is_some() {
            return self.open_on_gpu(opts);
        }
        self.rebuild(&opts)
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

/// The options a request object may hold (`session::OPTIONS`) as `[{name, flag}]` (`flag`: the
/// CLI's, or null), for the surface-consistency test.
#[wasm_bindgen(js_name = requestOptions)]
pub fn request_options() -> Vec<JsValue> {
    let flag = |f: Option<&str>| f.map_or(JsValue::NULL, JsValue::from_str);
    session::OPTIONS.iter().map(|o| named(o.name, flag(o.flag))).collect()
}

/// The options a load may name (`session::LOAD_OPTIONS`) as `[{name, flag}]` (`flag`: the
/// CLI's), for the surface-consistency test.
#[wasm_bindgen(js_name = loadOptions)]
pub fn load_option_names() -> Vec<JsValue> {
    session::LOAD_OPTIONS.iter().map(|o| named(o.name, o.flag.into())).collect()
}

fn named(name: &str, flag: JsValue) -> JsValue {
    Obj::new().set("name", name).set("flag", flag).build()
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

/// The load options JSON text names (`None`: the defaults). A session starts on the CPU; the gpu
/// build's `open` (web/suspend.rs) rebuilds it there.
pub(super) fn load_options(text: Option<&str>) -> Result<LoadOptions> {
    text.map_or(Ok(LoadOptions::default()), |t| LoadOptions::from_options(&json::parse(t)?))
}

/// A JS number used as a count: a whole number from 0 to 2^32 - 1.
pub(super) fn count(name: &'static str, v: f64) -> Result<usize> {
    if (0.0..=u32::MAX as f64).contains(&v) && v == libm::trunc(v) {
        Ok(v as usize)
    } else {
        Err(Error::InvalidArgument { name, reason: "expected a whole number from 0 to 2^32-1" })
    }
}
