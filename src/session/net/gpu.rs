//! Needle 3 on the GPU behind the session's [`Net`]: [`Needle3Gpu`] with the CPU model's
//! info and confidence. Snapshots (`save_state`/`load_state`) are refused for now: the GPU
//! rings are laid out for the GPU, and reading them back into the CPU format is not written.
use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{Net, NetGeneration, NetMark};
use crate::container::V3Container;
use crate::gpu::GpuMark;
use crate::session::{Backend, GpuKernels, LoadOptions, ModelInfo};
use crate::v3::{Model, Needle3, Needle3Gpu};
use crate::{Error, Result};

pub(super) fn load<'a>(
    bytes: &'a [u8],
    c: &V3Container<'a>,
    options: &LoadOptions,
) -> Result<Needle3Gpu<'a>> {
    let model = Model::new(c)?;
    let mut opts = super::v3::state_options(&model, options);
    let kernels = options.gpu_kernels.map_or_else(crate::gpu::kernels_from_env, Ok)?;
    if kernels != GpuKernels::Plain {
        opts.prefill_chunk = crate::gpu::tiled_chunk(bytes, &model, &opts)?;
    }
    Needle3Gpu::from_model(bytes, model, &opts, kernels)
}

const NO_SNAPSHOTS: Error = Error::Unsupported { what: "prefix snapshots on the GPU" };

impl Net for Needle3Gpu<'_> {
    fn info(&self) -> ModelInfo {
        ModelInfo { backend: Backend::Gpu, ..Needle3::info(self.model(), self.state()) }
    }

    fn reset(&mut self) {
        Needle3Gpu::reset(self)
    }

    fn kv_bytes(&self) -> usize {
        self.state_bytes() as usize
    }

    fn device_bytes(&self) -> u64 {
        self.gpu_bytes()
    }

    fn device_name(&self) -> Option<&str> {
        Some(self.adapter())
    }

    fn device_kernels(&self) -> Option<GpuKernels> {
        Some(self.kernels())
    }

    fn position(&self) -> usize {
        self.state().position()
    }

    fn feed(&mut self, ids: &[u32], logits: &mut [f32]) -> Result<()> {
        self.prefill(ids, logits)
    }

    fn feed_rows(&mut self, ids: &[u32], rows: &mut [f32]) -> Result<()> {
        self.prefill_rows(ids, rows)
    }

    fn mark(&self) -> NetMark {
        NetMark(Box::new(Needle3Gpu::mark(self)))
    }

    fn rewind(&mut self, mark: &NetMark) {
        let mark: &GpuMark<Needle3> =
            mark.0.downcast_ref().expect("a mark is only taken from this net");
        Needle3Gpu::rewind(self, mark);
    }

    fn confidence(&self, ids: &[u32]) -> Result<f32> {
        Needle3::confidence(self.model(), self.state(), ids)
    }

    fn save_state(&self) -> Result<Vec<u8>> {
        Err(NO_SNAPSHOTS)
    }

    fn state_len(&self, _pos: usize) -> Result<usize> {
        Err(NO_SNAPSHOTS)
    }

    fn load_state(&mut self, _bytes: &[u8]) -> Result<()> {
        self.reset();
        Err(NO_SNAPSHOTS)
    }

    fn snapshots(&self) -> Result<()> {
        Err(NO_SNAPSHOTS)
    }
}
