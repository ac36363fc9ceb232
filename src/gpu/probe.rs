//! A device opened for the model and proven to compute: the adapter and device requests, then
//! one small kernel's dispatch, copy and read back through [`super::wait`], checked value by
//! value. A driver that cannot compile WGSL, run a dispatch or map a buffer is refused here, at
//! load, rather than in the middle of a request, and before the weights go up; the probe's device
//! is then dropped (the engine opens its own, `device.rs`). Its device-lost and uncaptured-error
//! callbacks are armed while it runs: [`Probe::check_alive`] turns either into `GpuLost`.
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::wait;
use crate::{Error, Result};

/// Values the probe kernel writes (one per invocation, 4 workgroups of 64).
const PROBE_VALUES: u32 = 256;

const PROBE_KERNEL: &str = "
@group(0) @binding(0) var<storage, read_write> v: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&v)) { v[g.x] = g.x * 3u + 1u; }
}";

/// Why the device stopped, once it did (set by the lost and uncaptured-error callbacks).
#[derive(Default)]
struct Lost {
    lost: AtomicBool,
    reason: Mutex<String>,
}

impl Lost {
    fn set(&self, reason: String) {
        if let Ok(mut r) = self.reason.lock() {
            if r.is_empty() {
                *r = reason;
            }
        }
        self.lost.store(true, Ordering::Release);
    }
}

/// An open device that has run the probe kernel correctly.
pub struct Probe {
    device: wgpu::Device,
    lost: Arc<Lost>,
    /// The adapter's description (WebGPU gives no more through wgpu; the page reads the rest).
    pub adapter: String,
}

fn unavailable(reason: impl ToString) -> Error {
    Error::GpuUnavailable { reason: reason.to_string() }
}

impl Probe {
    /// The first adapter (high performance preferred), a device whose storage bindings and
    /// buffers hold at least `binding_bytes`, and the probe kernel's round trip on it.
    pub fn open(binding_bytes: u64) -> Result<Self> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapter = wait::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(unavailable)?;
        let have = adapter.limits();
        let most = have.max_storage_buffer_binding_size.min(have.max_buffer_size);
        if most < binding_bytes {
            return Err(unavailable(std::format!(
                "the adapter binds at most {most} bytes, the model needs {binding_bytes}"
            )));
        }
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: have.max_storage_buffer_binding_size,
            max_buffer_size: have.max_buffer_size,
            ..wgpu::Limits::downlevel_defaults()
        };
        let (device, queue) = wait::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("needle"),
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(unavailable)?;
        let lost = Arc::new(Lost::default());
        {
            let lost = lost.clone();
            device.set_device_lost_callback(move |reason, message| {
                lost.set(std::format!("{reason:?}: {message}"));
            });
        }
        {
            // An error no scope caught means a submitted step went wrong: the sequence state
            // on the device can no longer be trusted, as after a loss.
            let lost = lost.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| lost.set(e.to_string())));
        }
        let probe = Probe { device, lost, adapter: adapter.get_info().name };
        probe.round_trip(&queue)?;
        Ok(probe)
    }

    /// `Err(GpuLost)` once the device was lost or raised an uncaptured error.
    fn check_alive(&self) -> Result<()> {
        if self.lost.lost.load(Ordering::Acquire) {
            let reason = self.lost.reason.lock().map(|r| r.clone()).unwrap_or_default();
            return Err(Error::GpuLost { reason });
        }
        Ok(())
    }

    /// Compiles the probe kernel, runs it, reads its buffer back and checks every value.
    fn round_trip(&self, queue: &wgpu::Queue) -> Result<()> {
        let device = &self.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("probe"),
            source: wgpu::ShaderSource::Wgsl(PROBE_KERNEL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("probe"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let bytes = u64::from(PROBE_VALUES) * 4;
        let values = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("probe"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("probe read"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("probe"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: values.as_entire_binding() }],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(PROBE_VALUES.div_ceil(64), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&values, 0, &read, 0, bytes);
        queue.submit([encoder.finish()]);
        if let Some(e) = wait::block_on(scope.pop()) {
            return Err(unavailable(std::format!("the probe kernel was refused: {e}")));
        }
        let done = Arc::new(AtomicBool::new(false));
        let mapped = Arc::new(Mutex::new(None));
        {
            let (done, mapped) = (done.clone(), mapped.clone());
            read.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                if let Ok(mut m) = mapped.lock() {
                    *m = Some(r);
                }
                done.store(true, Ordering::Release);
            });
        }
        wait::wait_mapped(device, &done)?;
        self.check_alive()?;
        let outcome = mapped.lock().map(|mut m| m.take()).unwrap_or(None);
        if let Some(Err(e)) = outcome {
            return Err(Error::GpuLost { reason: std::format!("the probe read back failed: {e}") });
        }
        let view = read.slice(..).get_mapped_range().map_err(|e| Error::GpuLost {
            reason: std::format!("the probe read back failed: {e}"),
        })?;
        let right = view
            .chunks_exact(4)
            .enumerate()
            .all(|(i, w)| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) == i as u32 * 3 + 1);
        drop(view);
        read.unmap();
        if !right {
            return Err(unavailable("the adapter computed the probe kernel wrongly"));
        }
        Ok(())
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// Tests need an adapter (lavapipe in CI: mesa-vulkan-drivers); without one they say so and
    /// fail, rather than passing without having run.
    fn open(binding_bytes: u64) -> Result<Probe> {
        Probe::open(binding_bytes)
    }

    #[test]
    fn a_device_opens_and_computes_the_probe_kernel() {
        let probe = open(1 << 20).expect("an adapter (install mesa-vulkan-drivers for lavapipe)");
        assert!(probe.check_alive().is_ok());
    }

    #[test]
    fn a_model_larger_than_the_adapter_binds_is_unavailable() {
        let err = open(u64::MAX).err().expect("no adapter binds 2^64 bytes");
        assert_eq!(err.code(), "gpu_unavailable", "{err}");
    }
}
