//! The suspending call path of the `gpu` variant (feature `gpu`): the session calls that may wait
//! for the GPU, entered through `WebAssembly.promising` (pkg/engine/call.js), and the device they
//! run beside.
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
use crate::{Error, Result};

/// A session call waiting for `run_staged`: the name and arguments of a `Session` method.
enum Call {
    /// Opens the device (at load): adapter, device, the probe kernel's round trip; then the
    /// engine on the GPU with these load options.
    Open(Option<String>, Option<String>, Option<f64>, Option<f64>),
    Start(String),
    Prefill(f64),
    Next,
    Finish,
    Logits(Vec<u32>),
    Reconfigure(Option<String>, Option<String>, Option<f64>, Option<f64>),
    SaveSnapshot(String, Option<String>, Option<String>),
}

/// The staged call, its outcome, and the device.
#[derive(Default)]
pub(super) struct Calls {
    staged: Option<Call>,
    outcome: Option<Result<JsValue, JsValue>>,
    device: Option<Probe>,
    /// A call has already been refused with the current device's loss: the next one opens a
    /// new device.
    loss_reported: bool,
    /// Devices lost and replaced so far.
    losses: u32,
    /// The engine runs the GPU net.
    on_gpu: bool,
}

#[wasm_bindgen]
impl Session {
    /// Stages the call `name` with `args` (the method's own arguments, in order).
    pub fn stage(&mut self, name: &str, args: Vec<JsValue>) -> Result<(), JsValue> {
        let text = |i: usize| args.get(i).and_then(JsValue::as_string);
        let number = |i: usize| args.get(i).and_then(JsValue::as_f64);
        let wrong = || error(Error::InvalidArgument { name: "args", reason: "wrong arguments" });
        let call = match name {
            "open" => Call::Open(text(0), text(1), number(2), number(3)),
            "start" => Call::Start(text(0).ok_or_else(wrong)?),
            "prefill" => Call::Prefill(number(0).ok_or_else(wrong)?),
            "next" => Call::Next,
            "finish" => Call::Finish,
            "logits" => {
                let ids = args.first().ok_or_else(wrong)?;
                Call::Logits(js_sys::Uint32Array::new(ids).to_vec())
            }
            "reconfigure" => Call::Reconfigure(text(0), text(1), number(2), number(3)),
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
    /// device_losses}`. `backend` is "cpu": this build's session runs the CPU net beside the
    /// device (the GPU net of issue 40 plugs in behind the same calls).
    pub fn gpu_info(&self) -> Result<JsValue, JsValue> {
        let adapter = self.gpu.device.as_ref().map(|d| JsValue::from_str(&d.adapter));
        Ok(Obj::new()
            .set("backend", if self.gpu.on_gpu { "webgpu" } else { "cpu" })
            .set("adapter", adapter.unwrap_or(JsValue::NULL))
            .set("binding_bytes", self.binding_bytes().map_err(error)? as f64)
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
        // A loss during the call leaves its result unknown.
        if let Some(Err(e)) = self.gpu.device.as_ref().map(Probe::check_alive) {
            self.gpu.loss_reported = true;
            return Err(error(e));
        }
        value
    }

    fn dispatch(&mut self, call: Call) -> Result<JsValue, JsValue> {
        Ok(match call {
            Call::Open(kv, numerics, layers, context) => {
                let device = Probe::open(self.binding_bytes().map_err(error)?).map_err(error)?;
                self.gpu = Calls { device: Some(device), ..Calls::default() };
                let mut opts = super::session::load_options(
                    kv.as_deref(),
                    numerics.as_deref(),
                    layers,
                    context,
                )
                .map_err(error)?;
                opts.backend = crate::session::Backend::Gpu;
                let engine = crate::session::Engine::load(self.container_bytes_static(), &opts)
                    .map_err(error)?;
                *self.engine = engine;
                self.gpu.on_gpu = true;
                JsValue::UNDEFINED
            }
            Call::Start(request) => self.start(&request)?.into(),
            Call::Prefill(chunk) => self.prefill(chunk)?.into(),
            Call::Next => self.next_token()?,
            Call::Finish => self.finish()?.into(),
            Call::Logits(ids) => js_sys::Float32Array::from(&self.logits(&ids)?[..]).into(),
            Call::Reconfigure(kv, numerics, layers, context) => {
                self.reconfigure(kv, numerics, layers, context)?;
                JsValue::UNDEFINED
            }
            Call::SaveSnapshot(tools, system, date) => {
                js_sys::Uint8Array::from(&self.save_snapshot(&tools, system, date)?[..]).into()
            }
        })
    }

    /// `Err(GpuLost)` for the first call after the device was lost; the call after that opens a
    /// new device and starts from an empty sequence (what the lost device held is gone).
    fn device_ready(&mut self) -> Result<()> {
        let Some(device) = &self.gpu.device else {
            return Err(Error::GpuUnavailable { reason: "no device was opened".into() });
        };
        match device.check_alive() {
            Ok(()) => Ok(()),
            Err(e) if !self.gpu.loss_reported => {
                self.gpu.loss_reported = true;
                Err(e)
            }
            Err(_) => {
                self.gpu.device = None;
                self.gpu.device = Some(Probe::open(self.binding_bytes()?)?);
                self.gpu.loss_reported = false;
                self.gpu.losses += 1;
                self.reset();
                Ok(())
            }
        }
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
