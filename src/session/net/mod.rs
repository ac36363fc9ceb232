//! The seam between the session and a model generation: [`Net`], everything the session asks
//! of a loaded model and its sequence state. A generation plugs in by implementing
//! [`NetGeneration`] (`v2.rs`, `v3.rs`: how it loads, describes itself and scores
//! confidence); the rest (feeding tokens, positions, marks) is the shared model's and
//! state's ([`Model`], [`State`]), once.
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::any::Any;

use super::{Backend, GpuKernels, LoadOptions, ModelInfo};
use crate::blocks::model::Model;
use crate::blocks::persist::Writer;
use crate::blocks::state::{self, Generation, State};
use crate::container::Container;
use crate::kernels::parallel;
use crate::{Error, Result};

#[cfg(feature = "gpu")]
mod gpu;
mod v2;
mod v3;

/// A loaded model and its sequence state, as the session drives them.
// Send: an engine moves to the thread that hosts it (a worker, a fuzz harness, a server).
pub(super) trait Net: Send {
    fn info(&self) -> ModelInfo;
    /// Forgets the sequence.
    fn reset(&mut self);
    /// Bytes held by the KV rings.
    fn kv_bytes(&self) -> usize;
    /// Bytes of device memory the net holds (weights, activations, state): 0 on the CPU.
    fn device_bytes(&self) -> u64 {
        0
    }
    /// The device the forward pass runs on (the GPU adapter); `None` on the CPU.
    fn device_name(&self) -> Option<&str> {
        None
    }
    /// The GPU kernel variant the forward pass runs on; `None` on the CPU.
    fn device_kernels(&self) -> Option<GpuKernels> {
        None
    }
    /// Tokens consumed so far.
    fn position(&self) -> usize;
    /// Runs `ids` after what the state holds, writing the logits after the last one.
    fn feed(&mut self, ids: &[u32], logits: &mut [f32]) -> Result<()>;
    /// Runs `ids` after what the state holds, writing the logits after each of them.
    fn feed_rows(&mut self, ids: &[u32], rows: &mut [f32]) -> Result<()>;
    /// A copy of where the sequence is, to come back to with [`Net::rewind`].
    fn mark(&self) -> NetMark;
    /// Goes back to `mark`, taken from this net.
    fn rewind(&mut self, mark: &NetMark);
    /// The confidence head's logit over the whole sequence `ids` the state has consumed.
    fn confidence(&self, ids: &[u32]) -> Result<f32>;
    /// The bytes of where the sequence is (see [`crate::blocks::persist`]).
    fn save_state(&self) -> Result<Vec<u8>>;
    /// The length [`Net::save_state`] gives at position `pos` (at most the capacity).
    fn state_len(&self, pos: usize) -> Result<usize>;
    /// Goes to where [`Net::save_state`] of a net of the same model and options was; on a
    /// refusal the sequence is reset.
    fn load_state(&mut self, bytes: &[u8]) -> Result<()>;
    /// Whether a prefix snapshot of this net loads back with a fresh prefill's bits: `Ok`, or
    /// `Unsupported` saying why not. Asked before a snapshot is made, keyed or read.
    fn snapshots(&self) -> Result<()>;
}

/// A saved position of a [`Net`] (a [`state::Mark`] of its generation).
pub(super) struct NetMark(Box<dyn Any + Send>);

/// What a generation adds to the shared model and state to become a [`Net`]: how it
/// describes itself and scores confidence.
trait NetGeneration: Generation + Sized + 'static {
    fn info(model: &Model<'_, Self>, state: &State<Self>) -> ModelInfo;
    fn confidence(model: &Model<'_, Self>, state: &State<Self>, ids: &[u32]) -> Result<f32>;
    /// [`Net::snapshots`] for the generation on the CPU.
    fn snapshots() -> Result<()>;
}

/// A model with the state it runs.
struct Loaded<'a, G: Generation> {
    model: Model<'a, G>,
    state: State<G>,
}

/// The model in `container` (parsed from `bytes`), with a state made from `options`, on the
/// backend they name.
pub(super) fn load<'a>(
    bytes: &'a [u8],
    container: Container<'a>,
    options: &LoadOptions,
) -> Result<Box<dyn Net + 'a>> {
    Ok(match (container, options.backend) {
        (Container::V3(c), Backend::Cpu) => Box::new(v3::load(&c, options)?),
        (Container::V2(c), Backend::Cpu) => Box::new(v2::load(&c, options)?),
        (Container::V2(_), Backend::Gpu) => {
            return Err(Error::Unsupported { what: "Needle 2 on the GPU backend" })
        }
        #[cfg(feature = "gpu")]
        (Container::V3(c), Backend::Gpu) => Box::new(gpu::load(bytes, &c, options)?),
        #[cfg(not(feature = "gpu"))]
        (Container::V3(_), Backend::Gpu) => {
            let _ = bytes;
            return Err(Error::GpuUnavailable { reason: "built without the gpu feature".into() });
        }
    })
}

impl<'a, G: NetGeneration> Net for Loaded<'a, G>
where
    Model<'a, G>: Send + Sync,
    State<G>: Send,
    state::Mark<G>: Send,
{
    fn info(&self) -> ModelInfo {
        G::info(&self.model, &self.state)
    }

    fn reset(&mut self) {
        self.state.reset()
    }

    fn kv_bytes(&self) -> usize {
        self.state.kv_bytes()
    }

    fn position(&self) -> usize {
        self.state.position()
    }

    fn feed(&mut self, ids: &[u32], logits: &mut [f32]) -> Result<()> {
        let Loaded { model, state } = self;
        parallel::run(|| model.prefill(state, ids, logits))
    }

    fn feed_rows(&mut self, ids: &[u32], rows: &mut [f32]) -> Result<()> {
        let Loaded { model, state } = self;
        parallel::run(|| model.prefill_rows(state, ids, rows))
    }

    fn mark(&self) -> NetMark {
        NetMark(Box::new(self.state.mark()))
    }

    fn rewind(&mut self, mark: &NetMark) {
        let mark = mark.0.downcast_ref().expect("a mark is only taken from this net");
        self.state.rewind(mark);
    }

    fn confidence(&self, ids: &[u32]) -> Result<f32> {
        G::confidence(&self.model, &self.state, ids)
    }

    fn save_state(&self) -> Result<Vec<u8>> {
        let mut w = Writer::default();
        self.state.save(&mut w);
        Ok(w.0)
    }

    fn state_len(&self, pos: usize) -> Result<usize> {
        Ok(self.state.saved_len(pos))
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<()> {
        self.state.load(bytes)
    }

    fn snapshots(&self) -> Result<()> {
        G::snapshots()
    }
}
