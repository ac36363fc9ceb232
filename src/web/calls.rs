//! The session's calls that may wait for the GPU, listed once. `suspending!` writes each entry
//! as a plain method of the JS class (what the CPU builds call) and, in the `gpu` build, as a
//! `Staged` call found by its JS name, to run through `WebAssembly.promising` (web/suspend.rs,
//! pkg/engine/call.js). A new such method is one entry here; the JS side names it in
//! `call(session, name, ...args)` (tests/js/session-calls.test.mjs holds the names to this list).
use alloc::string::String;
use alloc::vec::Vec;

use wasm_bindgen::prelude::*;

#[cfg(feature = "gpu")]
use super::call_args::{Arg, Outcome};
use super::js::{error, Obj};
use super::session::{count, load_options, Session};
use super::snapshot::prefix_request;
use crate::json::{self, Value};
use crate::session::{self, Request};
use crate::Error;

/// Writes the methods (`fn name` or `fn name as jsName`, `&mut self`, owned arguments, a
/// `Result<_, JsValue>`) and, in the `gpu` build, `Staged`: a call found by its JS name, with
/// the JS arguments converted into the method's, to run later.
macro_rules! suspending {
    ($(
        $(#[cfg($cfg:meta)])?
        $(#[doc = $doc:literal])*
        fn $name:ident $(as $js:ident)? (&mut $this:ident $(, $arg:ident: $ty:ty)*) -> $ret:ty
        $body:block
    )*) => {
        #[wasm_bindgen]
        impl Session {
            $(
                $(#[cfg($cfg)])?
                $(#[doc = $doc])*
                $(#[wasm_bindgen(js_name = $js)])?
                pub fn $name(&mut $this $(, $arg: $ty)*) -> $ret $body
            )*
        }

        /// A listed call with its arguments, waiting for `run_staged` (web/suspend.rs): one
        /// variant per method, named as it is.
        #[cfg(feature = "gpu")]
        #[allow(non_camel_case_types)]
        pub(super) enum Staged {
            $(
                $(#[cfg($cfg)])?
                $name($($ty),*),
            )*
        }

        #[cfg(feature = "gpu")]
        impl Staged {
            /// The call `name` (as JS names it) with `args` converted to its arguments, in order.
            pub(super) fn new(name: &str, args: &[JsValue]) -> Result<Staged, JsValue> {
                let mut args = args.iter();
                Ok(match name {
                    $(
                        $(#[cfg($cfg)])?
                        js_name!($name $($js)?) => {
                            Staged::$name($(<$ty as Arg>::from_js(args.next())?),*)
                        }
                    )*
                    _ => {
                        let e = Error::InvalidArgument { name: "name", reason: "no such call" };
                        return Err(error(e));
                    }
                })
            }

            /// Calls the method on `s`; its value as the glue would return it.
            pub(super) fn run(self, s: &mut Session) -> Result<JsValue, JsValue> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Staged::$name($($arg),*) => s.$name($($arg),*).map(Outcome::into_js),
                    )*
                }
            }
        }
    };
}

/// The name JS calls a listed method by.
#[cfg(feature = "gpu")]
macro_rules! js_name {
    ($name:ident) => {
        stringify!($name)
    };
    ($name:ident $js:ident) => {
        stringify!($js)
    };
}

suspending! {
    #[cfg(feature = "gpu")]
    /// The gpu build's load: the probe (adapter, device, a kernel's round trip, then dropped),
    /// then the engine on the GPU with these load options (`new`'s `options`).
    fn open(&mut self, options: Option<String>) -> Result<(), JsValue> {
        self.open_gpu(options.as_deref()).map_err(error)
    }

    /// Rebuilds the engine over the same bytes with other load options (`new`'s `options`),
    /// where it runs now; the state starts empty.
    fn reconfigure(&mut self, options: Option<String>) -> Result<(), JsValue> {
        let opts = load_options(options.as_deref()).map_err(error)?;
        self.reload(opts).map_err(error)
    }

    /// Renders and tokenizes a request; returns the prompt length in tokens. `prefill` then runs
    /// the prompt, reusing what the state already holds of it (a fresh session's result, bit
    /// for bit).
    ///
    /// `request`: the options object as JSON text, `{"query": …, "tools": "<tool JSON text>",
    /// "maxTokens": 48, …}`, the names and defaults of `session::OPTIONS` (index.d.ts
    /// `CompleteOptions`); an unknown name or a mistyped value is `invalid_argument`. `finish`
    /// then returns the envelope with `validation` and `usage.cached_tokens`.
    fn start(&mut self, request: String) -> Result<u32, JsValue> {
        self.fits(&request).map_err(error)?;
        let object = json::parse(&request).map_err(error)?;
        let turns = session::turns(&object).map_err(error)?;
        let req = Request::from_options(&object, &turns).map_err(error)?;
        self.engine.begin(&req).map(|n| n as u32).map_err(error)
    }

    /// Runs at most `chunk` more prompt tokens of the started request; true once the whole
    /// prompt has run. Between two calls the host can see an abort.
    fn prefill(&mut self, chunk: f64) -> Result<bool, JsValue> {
        self.engine.prefill(count("chunk", chunk).map_err(error)?).map_err(error)
    }

    /// The next token as `{id, text}`, or `undefined` once generation has stopped.
    fn next_token as next(&mut self) -> Result<JsValue, JsValue> {
        Ok(match self.engine.next_token().map_err(error)? {
            Some(t) => Obj::new().set("id", t.id).set("text", t.text).build(),
            None => JsValue::UNDEFINED,
        })
    }

    /// Ends the generation. Returns the same JSON envelope as `needle run --json` (upstream's
    /// response keys, `confidence`, `stop_reason`, `usage`) with the generated `tokens` — as
    /// text, so both hosts print numbers identically.
    fn finish(&mut self) -> Result<String, JsValue> {
        let c = self.engine.finish().map_err(error)?;
        let Value::Object(mut members) = c.to_value() else {
            return Err(error(Error::Unsupported {
                what: "a completion that is not a JSON object",
            }));
        };
        let tokens = c.tokens.iter().map(|&t| Value::Int(t.to_string())).collect();
        members.push(("tokens".into(), Value::Array(tokens)));
        Ok(Value::Object(members).to_json())
    }

    /// Logits after each token of `ids` from a fresh state, `ids.len() x logits_len` row-major.
    fn logits(&mut self, ids: Vec<u32>) -> Result<Vec<f32>, JsValue> {
        self.engine.logits_for(&ids).map_err(error)
    }

    /// Prefills `tools_json` and `system` (and the date fact of `date`, as `start` takes it)
    /// from a fresh state and returns its snapshot; the session keeps that prefix for the next
    /// request. Only the system prompt and tools are in it.
    fn save_snapshot(
        &mut self,
        tools_json: String,
        system: Option<String>,
        date: Option<String>
    ) -> Result<Vec<u8>, JsValue> {
        let req = prefix_request(&tools_json, &system, &date);
        self.engine.save_snapshot(&req).map_err(error)
    }
}
