//! The suspending call path of the `gpu` variant (feature `gpu`): the session calls that may wait
//! for the GPU, entered through `WebAssembly.promising` (pkg/engine/call.js), and the engine they
//! run on the GPU (opened by `open`, opened again after a lost device).
//!
//! A suspending call cannot go through the glue's own method: the glue reads the export's result
//! synchronously, and `WebAssembly.promising` returns a promise instead. So a call takes three
//! steps: `stage(name, args)` (an ordinary method: the glue converts the arguments), then the raw
//! export of `run_staged` (no arguments but the session, no result: nothing for the glue to
//! convert) through `WebAssembly.promising`, then `take_result()` (an ordinary method: the glue
//! converts the value or throws the `NeedleError`). While `run_staged` is suspended the glue's
//! borrow flag stays held, so any other call on the session throws instead of re-entering it.
use alloc::string::String;
use alloc::vec::Vec;

use wasm_bindgen::prelude::*;

use super::js::{error, Obj};
use super::session::Session;
use crate::container::{self, DType};
use crate::gpu::probe::Probe;
use crate::session::{Backend, LoadOptions};
use crate::{Error, Result};

/// A session call waiting for `run_staged`: the name and arguments of a `Session` method.
enum Call {
    /// At load: the probe (adapter, device, a kernel's round trip, then dropped), then the
    /// engine on the GPU with these load options.
    Open(Option<String>),
    Start(String),
    Prefill(f64),
    Next,
    Finish,
    Logits(Vec<u32>),
    Reconfigure(Option<String>),
    SaveSnapshot(String, Option<String>, Option<String>),
}

/// The staged call, its outcome, and the GPU engine's options.
#[derive(Default)]
pub(super) struct Calls {
    staged: Option<Call>,
    outcome: Option<Result<JsValue, JsValue>>,
    /// The load options of the engine on the GPU, once `open` built it.
    on_gpu: Option<LoadOptions>,
    /// The adapter the probe ran on.
    adapter: Option<String>,
    /// A call was refused with `gpu_lost`: the next one opens the engine on a new device.
    lost: bool,
    /// Devices lost and replaced so far.
    losses: u32,
}

#[wasm_bindgen]
impl Session {
    /// Stages the call `name` with `args` (the method's own arguments, in order).
    pub fn stage(&mut self, name: &str, args: Vec<JsValue>) -> Result<(), JsValue> {
        let text = |i: usize| args.get(i).and_then(JsValue::as_string);
        let number = |i: usize| args.get(i).and_then(JsValue::as_f64);
        let wrong = || error(Error::InvalidArgument { name: "args", reason: "wrong arguments" });
        let call = match name {
            "open" => Call::Open(text(0)),
            "start" => Call::Start(text(0).ok_or_else(wrong)?),
            "prefill" => Call::Prefill(number(0).ok_or_else(wrong)?),
            "next" => Call::Next,
            "finish" => Call::Finish,
            "logits" => {
                let ids = args.first().ok_or_else(wrong)?;
                Call::Logits(js_sys::Uint32Array::new(ids).to_vec())
            }
            "reconfigure" => Call::Reconfigure(text(0)),
            "save_snapshot" => Call::SaveSnapshot(text(0).ok_or_else(wrong)?, text(1), text(2)),
            _ => {
                return Err(error(Error::InvalidArgument { name: "name", reason: "no such call" }))
            }
        };
        self.gpu.staged = Some(call);
        self.gpu.outcome = None;
        Ok(())
    }

    /// Runs the staged call, keeping its outcome for `take_result`. Entered through
    /// `WebAssembly.promising`: the GPU waits inside suspend it (src/gpu/wait.rs).
    pub fn run_staged(&mut self) {
        let outcome = match self.gpu.staged.take() {
            Some(call) => self.run_call(call),
            None => Err(error(Error::InvalidArgument { name: "call", reason: "nothing staged" })),
        };
        self.gpu.outcome = Some(outcome);
    }

    /// The outcome of the last `run_staged`: its value, or its error thrown.
    pub fn take_result(&mut self) -> Result<JsValue, JsValue> {
        self.gpu.outcome.take().unwrap_or_else(|| {
            Err(error(Error::InvalidArgument { name: "call", reason: "no call has run" }))
        })
    }

    /// Where the forward pass runs and what the GPU needs: `{backend, adapter, binding_bytes,
    /// gpu_bytes, device_losses}` (`backend`: "webgpu" once `open` built the engine on the GPU;
    /// `gpu_bytes`: every buffer it holds there, 0 before).
    pub fn gpu_info(&self) -> Result<JsValue, JsValue> {
        let adapter = self.gpu.adapter.as_deref().map(JsValue::from_str);
        Ok(Obj::new()
            .set("backend", if self.gpu.on_gpu.is_some() { "webgpu" } else { "cpu" })
            .set("adapter", adapter.unwrap_or(JsValue::NULL))
            .set("binding_bytes", self.binding_bytes().map_err(error)? as f64)
            .set("gpu_bytes", self.engine.device_bytes() as f64)
            .set("device_losses", self.gpu.losses)
            .build())
    }
}

impl Session {
    fn run_call(&mut self, call: Call) -> Result<JsValue, JsValue> {
        if !matches!(call, Call::Open(..)) {
            self.device_ready().map_err(error)?;
        }
        let value = self.dispatch(call);
        if let Err(e) = &value {
            let code = js_sys::Reflect::get(e, &JsValue::from_str("code")).ok();
            self.gpu.lost |= code.and_then(|c| c.as_string()).as_deref() == Some("gpu_lost");
        }
        value
    }

    fn dispatch(&mut self, call: Call) -> Result<JsValue, JsValue> {
        Ok(match call {
            Call::Open(options) => {
                // A driver that cannot compute is refused before the weights go up.
                let probe = Probe::open(self.binding_bytes().map_err(error)?).map_err(error)?;
                self.open_on_gpu(gpu_options(options.as_deref())?).map_err(error)?;
                self.gpu.adapter = Some(probe.adapter);
                JsValue::UNDEFINED
            }
            Call::Start(request) => self.start(&request)?.into(),
            Call::Prefill(chunk) => self.prefill(chunk)?.into(),
            Call::Next => self.next_token()?,
            Call::Finish => self.finish()?.into(),
            Call::Logits(ids) => js_sys::Float32Array::from(&self.logits(&ids)?[..]).into(),
            Call::Reconfigure(options) if self.gpu.on_gpu.is_some() => {
                self.open_on_gpu(gpu_options(options.as_deref())?).map_err(error)?;
                JsValue::UNDEFINED
            }
            Call::Reconfigure(options) => {
                self.reconfigure(options)?;
                JsValue::UNDEFINED
            }
            Call::SaveSnapshot(tools, system, date) => {
                js_sys::Uint8Array::from(&self.save_snapshot(&tools, system, date)?[..]).into()
            }
        })
    }

    /// Builds the engine on the GPU (a device of its own) with `opts`; the sequence is empty.
    fn open_on_gpu(&mut self, opts: LoadOptions) -> Result<()> {
        self.rebuild(&opts)?;
        self.gpu.on_gpu = Some(opts);
        self.gpu.lost = false;
        Ok(())
    }

    /// After a call was refused with `gpu_lost`, opens the engine again on a new device (the
    /// sequence starts empty: what the lost device held is gone); `GpuUnavailable` where none
    /// opens any more.
    fn device_ready(&mut self) -> Result<()> {
        let Some(opts) = self.gpu.on_gpu else {
            return Err(Error::GpuUnavailable { reason: "no device was opened".into() });
        };
        if self.gpu.lost {
            self.open_on_gpu(opts).map_err(|e| Error::GpuUnavailable {
                reason: alloc::format!("the device was lost and no new one opens: {e}"),
            })?;
            self.gpu.losses += 1;
        }
        Ok(())
    }

    /// Bytes of the largest tensor as the GPU holds it (CQ codes as stored, floats widened to
    /// f32): what one storage binding must hold.
    fn binding_bytes(&self) -> Result<u64> {
        let c = container::parse(self.container_bytes())?;
        let held = |t: &container::NamedTensor<'_>| match t.view.dtype {
            DType::F16 | DType::F32 => t.view.numel() as u64 * 4,
            DType::Cq | DType::Raw => t.view.data.len() as u64,
        };
        Ok(c.tensors().iter().map(held).max().unwrap_or(0))
    }
}

/// The load options of an engine on the GPU (`options`: `Session::new`'s JSON text).
fn gpu_options(options: Option<&str>) -> Result<LoadOptions, JsValue> {
    let opts = super::session::load_options(options).map_err(error)?;
    Ok(LoadOptions { backend: Backend::Gpu, ..opts })
}
