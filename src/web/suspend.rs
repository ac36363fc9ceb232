//! The suspending call path of the `gpu` variant (feature `gpu`): the session calls that may wait
//! for the GPU (listed in web/calls.rs), entered through `WebAssembly.promising`
//! (pkg/engine/call.js), and the engine they run on the GPU (opened by `open`, opened again after
//! a lost device).
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

use super::calls::Staged;
use super::js::{error, Obj};
use super::session::Session;
use crate::container::{self, DType};
use crate::gpu::probe::Probe;
use crate::session::{Backend, LoadOptions};
use crate::{Error, Result};

/// The staged call, its outcome, and the GPU engine's options.
#[derive(Default)]
pub(super) struct Calls {
    staged: Option<Staged>,
    outcome: Option<Result<JsValue, JsValue>>,
    /// The load options of the engine on the GPU, once `open` built it.
    pub(super) on_gpu: Option<LoadOptions>,
    /// The adapter the probe ran on.
    adapter: Option<String>,
    /// A call was refused with `gpu_lost`: the next one opens the engine on a new device.
    lost: bool,
    /// Devices lost and replaced so far.
    losses: u32,
}

#[wasm_bindgen]
impl Session {
    /// Stages the call `name` (a method of web/calls.rs's list, by its JS name) with `args`
    /// (the method's own arguments, in order).
    pub fn stage(&mut self, name: &str, args: Vec<JsValue>) -> Result<(), JsValue> {
        self.gpu.staged = Some(Staged::new(name, &args)?);
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

    /// Where the forward pass runs and what the GPU needs: `{backend, adapter, kernels,
    /// binding_bytes, gpu_bytes, device_losses}` (`backend`: "webgpu" once `open` built the
    /// engine on the GPU; `kernels`: the variant it runs, null before; `gpu_bytes`: every
    /// buffer it holds there, 0 before).
    pub fn gpu_info(&self) -> Result<JsValue, JsValue> {
        let adapter = self.gpu.adapter.as_deref().map(JsValue::from_str);
        Ok(Obj::new()
            .set("backend", if self.gpu.on_gpu.is_some() { "webgpu" } else { "cpu" })
            .set("adapter", adapter.unwrap_or(JsValue::NULL))
            .set("kernels", self.engine.device_kernels().map_or(JsValue::NULL, |k| k.name().into()))
            .set("binding_bytes", self.binding_bytes().map_err(error)? as f64)
            .set("gpu_bytes", self.engine.device_bytes() as f64)
            .set("device_losses", self.gpu.losses)
            .build())
    }
}

impl Session {
    fn run_call(&mut self, call: Staged) -> Result<JsValue, JsValue> {
        // `open` is what makes the device ready.
        if !matches!(call, Staged::open(..)) {
            self.device_ready().map_err(error)?;
        }
        let value = call.run(self);
        if let Err(e) = &value {
            let code = js_sys::Reflect::get(e, &JsValue::from_str("code")).ok();
            self.gpu.lost |= code.and_then(|c| c.as_string()).as_deref() == Some("gpu_lost");
        }
        value
    }

    /// `open`'s work (`options`: `Session::new`'s JSON text).
    pub(super) fn open_gpu(&mut self, options: Option<&str>) -> Result<()> {
        // A driver that cannot compute is refused before the weights go up.
        let probe = Probe::open(self.binding_bytes()?)?;
        self.open_on_gpu(super::session::load_options(options)?)?;
        self.gpu.adapter = Some(probe.adapter);
        Ok(())
    }

    /// Builds the engine on the GPU (a device of its own) with `opts`; the sequence is empty.
    pub(super) fn open_on_gpu(&mut self, opts: LoadOptions) -> Result<()> {
        let opts = LoadOptions { backend: Backend::Gpu, ..opts };
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
