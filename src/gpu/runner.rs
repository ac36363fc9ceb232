//! The buffers of one loaded model and sequence, and a chunk's one submission: upload the
//! chunk header, ids, slots and RoPE angles; replay the recorded dispatches in one compute
//! pass; copy the logits rows (and the probe-head cells) to one staging buffer; read it back.
use std::vec;
use std::vec::Vec;

use wgpu::util::DeviceExt;

use super::device::{Gpu, SLOT_BYTES};
use super::program::Scope;
use super::stages::{Recorded, HEADER};
use super::variant;
use crate::session::GpuKernels;
use crate::{Error, Result};

/// What one chunk needs from the CPU.
pub(crate) struct ChunkInputs<'c> {
    pub(crate) ids: &'c [u32],
    pub(crate) pos: usize,
    pub(crate) cos: &'c [f32],
    pub(crate) sin: &'c [f32],
    pub(crate) slots: &'c [Option<u32>],
    /// The first chunk row whose logits are read back (`None`: no logits this chunk).
    pub(crate) head_first: Option<usize>,
}

pub(crate) struct Runner {
    pub(crate) gpu: Gpu,
    rec: Recorded,
    pub(crate) kernels: GpuKernels,
    state: wgpu::Buffer,
    pub(crate) act: wgpu::Buffer,
    ids: wgpu::Buffer,
    staging: wgpu::Buffer,
    bind: wgpu::BindGroup,
    logits_len: usize,
    /// Probe-head cell rows (0 when no head pools) of `d` floats a token.
    cell_rows: usize,
    d: usize,
    /// Bytes of the sequence state (KV rings and tails).
    pub(crate) state_bytes: u64,
    /// Bytes of every buffer (weights, activations, state, staging).
    pub(crate) total_bytes: u64,
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Refuses what the adapter cannot run: the subgroup kernels without subgroups, a buffer over
/// its storage binding limit.
fn check_adapter(
    gpu: &Gpu,
    kernels: GpuKernels,
    rec: &Recorded,
    code_bytes: &[u8],
    weight_floats: &[f32],
) -> Result<()> {
    if kernels == GpuKernels::Subgroup && !gpu.subgroups {
        return Err(Error::GpuUnavailable {
            reason: std::format!(
                "{} offers no subgroups (NEEDLE_GPU_KERNELS=subgroup)",
                gpu.adapter
            ),
        });
    }
    let max = gpu.max_binding();
    let sizes = [
        ("container", code_bytes.len() as u64),
        ("float weights", 4 * weight_floats.len() as u64),
        ("activations", 4 * rec.act_len as u64),
        ("sequence state", 4 * rec.state_len as u64),
    ];
    for (what, bytes) in sizes {
        if bytes > max {
            return Err(Error::GpuUnavailable {
                reason: std::format!(
                    "{what} ({bytes} bytes) exceeds the adapter's storage binding limit of {max}"
                ),
            });
        }
    }
    Ok(())
}

impl Buffers {
    /// The weights uploaded, the activations, state and ids buffers sized for `rec`, and a
    /// readback buffer of `staging_bytes`.
    fn new(
        gpu: &Gpu,
        rec: &Recorded,
        code_bytes: &[u8],
        weight_floats: &[f32],
        staging_bytes: u64,
    ) -> Self {
        let dev = &gpu.device;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let init = |label, contents: &[u8], usage| {
            dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let empty = |label, bytes: u64, usage| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.max(16).next_multiple_of(4),
                usage,
                mapped_at_creation: false,
            })
        };
        let mut wf = floats(weight_floats);
        wf.resize(wf.len().max(16), 0);
        let copies = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        Self {
            params: init("params", &words(&rec.program.params), wgpu::BufferUsages::UNIFORM),
            codes: init("codes", code_bytes, storage),
            weights: init("weights", &wf, storage),
            act: empty("activations", 4 * rec.act_len as u64, storage | copies),
            state: empty("state", 4 * rec.state_len as u64, storage | copies),
            ids: empty("ids", 4 * rec.ids_len as u64, storage),
            staging: empty(
                "readback",
                staging_bytes,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        }
    }

    /// Binding 0: a parameter slot (a dynamic offset per dispatch); 1..=5: the storage buffers.
    fn bind_group(&self, gpu: &Gpu) -> wgpu::BindGroup {
        fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry { binding, resource: buffer.as_entire_binding() }
        }
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("needle"),
            layout: &gpu.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &self.params,
                        offset: 0,
                        size: wgpu::BufferSize::new(SLOT_BYTES),
                    }),
                },
                entry(1, &self.codes),
                entry(2, &self.weights),
                entry(3, &self.act),
                entry(4, &self.state),
                entry(5, &self.ids),
            ],
        })
    }
}

/// The buffers of one model and sequence, and the bind group over them.
struct Buffers {
    params: wgpu::Buffer,
    codes: wgpu::Buffer,
    weights: wgpu::Buffer,
    act: wgpu::Buffer,
    state: wgpu::Buffer,
    ids: wgpu::Buffer,
    staging: wgpu::Buffer,
}

impl Runner {
    /// The recorded pass `rec` on `gpu` with its buffers made: the container's codes, the
    /// float weights, `logits_len` floats a logits row and `cell_rows` probe-head cells of `d`
    /// floats a token read back, on the `kernels` variant.
    pub(crate) fn new(
        gpu: Gpu,
        rec: Recorded,
        code_bytes: &[u8],
        weight_floats: &[f32],
        logits_len: usize,
        (cell_rows, d): (usize, usize),
        kernels: GpuKernels,
    ) -> Result<Self> {
        check_adapter(&gpu, kernels, &rec, code_bytes, weight_floats)?;
        let staging_bytes = 4 * (rec.b * (logits_len + cell_rows * d)) as u64;
        let buffers = Buffers::new(&gpu, &rec, code_bytes, weight_floats, staging_bytes);
        let bind = buffers.bind_group(&gpu);
        let Buffers { params, codes, weights, act, state, ids, staging } = buffers;
        let total_bytes = [&params, &codes, &weights, &act, &state, &ids, &staging]
            .iter()
            .map(|b| b.size())
            .sum();
        let state_bytes = state.size();
        gpu.wait()?;
        Ok(Self {
            gpu,
            rec,
            kernels,
            state,
            act,
            ids,
            staging,
            bind,
            logits_len,
            cell_rows,
            d,
            state_bytes,
            total_bytes,
        })
    }

    /// The largest chunk the pass was recorded for.
    pub(crate) fn chunk(&self) -> usize {
        self.rec.b
    }

    /// Dispatches of one chunk (with or without the head).
    pub(crate) fn dispatches(&self, head: bool) -> usize {
        self.rec.program.count(head)
    }

    /// Bytes read back for a chunk of `tokens` whose head runs on `rows` rows.
    pub(crate) fn readback_bytes(&self, rows: usize, tokens: usize) -> usize {
        4 * (rows * self.logits_len + self.cell_rows * tokens * self.d)
    }

    /// Runs one chunk; writes its logits rows (from `head_first`) into `logits` and the
    /// probe-head cells into `cells` (row `i` of token `t` at `(i * tokens + t) * d`).
    pub(crate) fn run_chunk(
        &self,
        c: &ChunkInputs<'_>,
        logits: &mut [f32],
        cells: &mut [f32],
    ) -> Result<()> {
        self.gpu.check_alive()?;
        let b = c.ids.len();
        let first = c.head_first.unwrap_or(b);
        let mut header = vec![b as u32, c.pos as u32, first as u32];
        header.extend_from_slice(c.ids);
        header.resize(HEADER + self.rec.b, 0);
        header.extend(c.slots.iter().map(|s| s.unwrap_or(u32::MAX)));
        let q = &self.gpu.queue;
        q.write_buffer(&self.ids, 0, &words(&header));
        let r = &self.rec.regions;
        if !c.cos.is_empty() {
            q.write_buffer(&self.act, 4 * u64::from(r.cos), &floats(c.cos));
            q.write_buffer(&self.act, 4 * u64::from(r.sin), &floats(c.sin));
        }
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for d in &self.rec.program.dispatches {
                let tokens = match d.scope {
                    Scope::Chunk => b,
                    Scope::Head if c.head_first.is_some() => b - first,
                    Scope::Head => continue,
                };
                let (kernel, (x, y)) = variant::grid(self.kernels, d, tokens as u32);
                pass.set_pipeline(self.gpu.pipeline(kernel));
                pass.set_bind_group(0, &self.bind, &[d.slot * SLOT_BYTES as u32]);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        let rows = b - first;
        let logit_bytes = 4 * (rows * self.logits_len) as u64;
        if rows > 0 {
            enc.copy_buffer_to_buffer(
                &self.act,
                4 * u64::from(r.logits),
                &self.staging,
                0,
                logit_bytes,
            );
        }
        // Each cell row's first b tokens (the region holds the largest chunk's).
        let row_bytes = 4 * (b * self.d) as u64;
        for i in 0..self.cell_rows {
            let from = 4 * (u64::from(r.cells) + (i * self.rec.b * self.d) as u64);
            let to = logit_bytes + i as u64 * row_bytes;
            enc.copy_buffer_to_buffer(&self.act, from, &self.staging, to, row_bytes);
        }
        let cell_bytes = row_bytes * self.cell_rows as u64;
        q.submit([enc.finish()]);
        let total = logit_bytes + cell_bytes;
        if total == 0 {
            return self.gpu.wait();
        }
        let slice = self.staging.slice(..total);
        let done = std::sync::Arc::new(core::sync::atomic::AtomicBool::new(false));
        let mapped = std::sync::Arc::new(std::sync::Mutex::new(None));
        {
            let (done, mapped) = (done.clone(), mapped.clone());
            slice.map_async(wgpu::MapMode::Read, move |res| {
                if let Ok(mut m) = mapped.lock() {
                    *m = Some(res);
                }
                done.store(true, core::sync::atomic::Ordering::Release);
            });
        }
        super::wait::wait_mapped(&self.gpu.device, &done)?;
        self.gpu.check_alive()?;
        let res = mapped.lock().ok().and_then(|mut m| m.take());
        match res {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(Error::GpuLost { reason: e.to_string() }),
            None => return Err(Error::GpuLost { reason: "the map never completed".into() }),
        }
        {
            let data =
                slice.get_mapped_range().map_err(|e| Error::GpuLost { reason: e.to_string() })?;
            let all: &[u8] = &data;
            let to_f32 = |b: &[u8], out: &mut [f32]| {
                for (o, w) in out.iter_mut().zip(b.chunks_exact(4)) {
                    *o = f32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                }
            };
            to_f32(&all[..logit_bytes as usize], &mut logits[..rows * self.logits_len]);
            to_f32(&all[logit_bytes as usize..], &mut cells[..self.cell_rows * b * self.d]);
        }
        self.staging.unmap();
        Ok(())
    }

    /// A copy of the sequence state, to come back to with [`Self::rewind`].
    pub(crate) fn mark(&self) -> wgpu::Buffer {
        let copy = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("mark"),
            size: self.state.size(),
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.copy_state(&self.state, &copy);
        copy
    }

    pub(crate) fn rewind(&self, mark: &wgpu::Buffer) {
        self.copy_state(mark, &self.state);
    }

    fn copy_state(&self, from: &wgpu::Buffer, to: &wgpu::Buffer) {
        let mut enc = self.gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(from, 0, to, 0, self.state.size());
        self.gpu.queue.submit([enc.finish()]);
    }
}
