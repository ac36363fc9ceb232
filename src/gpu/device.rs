//! The wgpu device and the compute pipelines of every kernel, all over one bind group layout
//! (see `shaders/common.wgsl`). Every failure is a typed [`Error`], never a panic: no adapter
//! (or `NEEDLE_GPU_ADAPTER=none`, which tests use to force that case), a buffer over the
//! adapter's binding limit (`NEEDLE_GPU_MAX_BINDING=BYTES` lowers it, for tests), a shader or
//! pipeline the driver refuses, a lost device or an error inside a submission (both make the
//! device unusable: the next call is `GpuLost`).
use std::string::{String, ToString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::vec::Vec;

use super::wait::block_on;
use crate::{Error, Result};

/// Bytes of one dispatch's parameter slot (the uniform dynamic-offset alignment WebGPU
/// guarantees).
pub(crate) const SLOT_BYTES: u64 = 256;
/// Invocations per workgroup (every kernel's `@workgroup_size`).
pub(crate) const WORKGROUP: u32 = 64;

/// One shader family: its file and entry points.
struct Family {
    source: &'static str,
    entries: &'static [Kernel],
    /// Uses subgroup operations: compiled only on a device created with `Features::SUBGROUP`.
    subgroups: bool,
}

/// The kernels, by entry-point name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Rotate,
    Matmul,
    MatvecTiled,
    MatmulTiled,
    MatvecSubgroup,
    GatherRows,
    LaneMean,
    CopyRows,
    TailWrite,
    Coefficients,
    Collapse,
    Expand,
    EngramGate,
    EngramConv,
    QkvConv,
    QkNormRope,
    KvWrite,
    Attend,
    PostResidual,
    CondLogits,
    MlpIn,
    KronRight,
    KronLeft,
    MlpMid,
    MlpOut,
}

const COMMON: &str = include_str!("shaders/common.wgsl");
const HADAMARD: &str = include_str!("shaders/hadamard.wgsl");

const FAMILIES: &[Family] = &[
    Family { source: HADAMARD, entries: &[Kernel::Rotate], subgroups: false },
    Family {
        source: include_str!("shaders/cq.wgsl"),
        entries: &[Kernel::Matmul, Kernel::GatherRows],
        subgroups: false,
    },
    // The tiled variant's matmuls (`super::variant`), over cq.wgsl's code and norm readers.
    Family {
        source: concat!(include_str!("shaders/cq.wgsl"), include_str!("shaders/cq_tiled.wgsl")),
        entries: &[Kernel::MatvecTiled, Kernel::MatmulTiled],
        subgroups: false,
    },
    // The subgroup variant's decode matvec, over cq_tiled.wgsl's readers and table.
    Family {
        source: concat!(
            include_str!("shaders/cq.wgsl"),
            include_str!("shaders/cq_tiled.wgsl"),
            include_str!("shaders/cq_subgroup.wgsl")
        ),
        entries: &[Kernel::MatvecSubgroup],
        subgroups: true,
    },
    Family {
        source: include_str!("shaders/norm.wgsl"),
        entries: &[Kernel::LaneMean],
        subgroups: false,
    },
    Family {
        source: include_str!("shaders/rows.wgsl"),
        entries: &[Kernel::CopyRows, Kernel::TailWrite],
        subgroups: false,
    },
    Family {
        source: include_str!("shaders/mhc.wgsl"),
        entries: &[Kernel::Coefficients, Kernel::Collapse, Kernel::Expand],
        subgroups: false,
    },
    Family {
        source: include_str!("shaders/engram.wgsl"),
        entries: &[Kernel::EngramGate, Kernel::EngramConv],
        subgroups: false,
    },
    Family {
        source: include_str!("shaders/attention.wgsl"),
        entries: &[Kernel::QkvConv, Kernel::QkNormRope, Kernel::KvWrite, Kernel::Attend],
        subgroups: false,
    },
    Family {
        source: include_str!("shaders/mlp.wgsl"),
        entries: &[
            Kernel::PostResidual,
            Kernel::CondLogits,
            Kernel::MlpIn,
            Kernel::KronRight,
            Kernel::KronLeft,
            Kernel::MlpMid,
            Kernel::MlpOut,
        ],
        subgroups: false,
    },
];

impl Kernel {
    fn entry(self) -> &'static str {
        match self {
            Kernel::Rotate => "rotate",
            Kernel::Matmul => "matmul",
            Kernel::MatvecTiled => "matvec_tiled",
            Kernel::MatmulTiled => "matmul_tiled",
            Kernel::MatvecSubgroup => "matvec_subgroup",
            Kernel::GatherRows => "gather_rows",
            Kernel::LaneMean => "lane_mean",
            Kernel::CopyRows => "copy_rows",
            Kernel::TailWrite => "tail_write",
            Kernel::Coefficients => "coefficients",
            Kernel::Collapse => "collapse",
            Kernel::Expand => "expand",
            Kernel::EngramGate => "engram_gate",
            Kernel::EngramConv => "engram_conv",
            Kernel::QkvConv => "qkv_conv",
            Kernel::QkNormRope => "qk_norm_rope",
            Kernel::KvWrite => "kv_write",
            Kernel::Attend => "attend",
            Kernel::PostResidual => "post_residual",
            Kernel::CondLogits => "cond_logits",
            Kernel::MlpIn => "mlp_in",
            Kernel::KronRight => "kron_right",
            Kernel::KronLeft => "kron_left",
            Kernel::MlpMid => "mlp_mid",
            Kernel::MlpOut => "mlp_out",
        }
    }
}

/// A device with every kernel's pipeline.
pub(crate) struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) layout: wgpu::BindGroupLayout,
    pipelines: Vec<(Kernel, wgpu::ComputePipeline)>,
    /// The device has `Features::SUBGROUP` (requested where the adapter offers it) and the
    /// subgroup families' pipelines.
    pub(crate) subgroups: bool,
    /// Set by the device-lost callback.
    lost: Arc<AtomicBool>,
    lost_reason: Arc<Mutex<String>>,
    /// The adapter, for `info()` and the reports.
    pub(crate) adapter: String,
}

fn unavailable(reason: impl ToString) -> Error {
    Error::GpuUnavailable { reason: reason.to_string() }
}

/// The adapter wgpu offers first (high performance preferred), or `GpuUnavailable` where there is
/// none (or `NEEDLE_GPU_ADAPTER=none`, which tests use to force that case).
pub(crate) fn adapter() -> Result<wgpu::Adapter> {
    if std::env::var("NEEDLE_GPU_ADAPTER").is_ok_and(|v| v == "none") {
        return Err(unavailable("NEEDLE_GPU_ADAPTER=none"));
    }
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(unavailable)
}

/// The adapter as the reports name it: name, backend, kind, and its subgroup sizes where the
/// subgroup kernels can run (what a device run's `subgroup` figures ran on).
fn describe(info: &wgpu::AdapterInfo, subgroups: bool) -> String {
    let mut s = std::format!("{} ({:?}, {:?}", info.name, info.backend, info.device_type);
    if subgroups {
        s += &std::format!(", subgroups of {}..{}", info.subgroup_min_size, info.subgroup_max_size);
    }
    s + ")"
}

/// Whether `adapter` offers subgroups (wgpu's `SUBGROUP`), unless `NEEDLE_GPU_SUBGROUPS=none`,
/// which tests use to stand for an adapter without them.
pub(crate) fn offers_subgroups(adapter: &wgpu::Adapter) -> bool {
    adapter.features().contains(wgpu::Features::SUBGROUP)
        && !std::env::var("NEEDLE_GPU_SUBGROUPS").is_ok_and(|v| v == "none")
}

impl Gpu {
    /// The first adapter wgpu offers (high performance preferred), with the largest storage
    /// buffer limits it supports, and every pipeline compiled.
    pub(crate) fn new() -> Result<Self> {
        let adapter = adapter()?;
        let info = adapter.get_info();
        let have = adapter.limits();
        let cap = std::env::var("NEEDLE_GPU_MAX_BINDING").ok().and_then(|v| v.parse::<u64>().ok());
        let cap = cap.unwrap_or(u64::MAX);
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: have.max_storage_buffer_binding_size.min(cap),
            max_buffer_size: have.max_buffer_size.min(cap),
            max_storage_buffers_per_shader_stage: have.max_storage_buffers_per_shader_stage.min(8),
            ..wgpu::Limits::downlevel_defaults()
        };
        let subgroups = offers_subgroups(&adapter);
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("needle"),
            required_limits: limits,
            required_features: if subgroups {
                wgpu::Features::SUBGROUP
            } else {
                wgpu::Features::empty()
            },
            ..Default::default()
        }))
        .map_err(unavailable)?;
        let (lost, lost_reason) =
            (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(String::new())));
        let (flag, why) = (lost.clone(), lost_reason.clone());
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut w) = why.lock() {
                *w = std::format!("{reason:?}: {message}");
            }
            flag.store(true, Ordering::SeqCst);
        });
        // wgpu's default panics on an error outside an error scope; here it ends the device.
        let (flag, why) = (lost.clone(), lost_reason.clone());
        device.on_uncaptured_error(Arc::new(move |e| {
            if let Ok(mut w) = why.lock() {
                *w = std::format!("{e}");
            }
            flag.store(true, Ordering::SeqCst);
        }));
        let layout = bind_group_layout(&device);
        let pipelines = pipelines(&device, &layout, subgroups)?;
        Ok(Self {
            device,
            queue,
            layout,
            pipelines,
            subgroups,
            lost,
            lost_reason,
            adapter: describe(&info, subgroups),
        })
    }

    /// Destroys the device, as a driver reset would (the failure tests' device loss).
    pub(crate) fn destroy(&self) {
        self.device.destroy();
    }

    /// `k`'s pipeline; every kernel has one, but a subgroup family's only on a device with
    /// `subgroups` (`Runner::new` refuses those kernels elsewhere).
    pub(crate) fn pipeline(&self, k: Kernel) -> &wgpu::ComputePipeline {
        &self.pipelines.iter().find(|(p, _)| *p == k).expect("the kernel's pipeline was built").1
    }

    /// Largest buffer a binding may hold.
    pub(crate) fn max_binding(&self) -> u64 {
        let l = self.device.limits();
        l.max_storage_buffer_binding_size.min(l.max_buffer_size)
    }

    /// `Err(GpuLost)` once the device is gone.
    pub(crate) fn check_alive(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            let reason = self.lost_reason.lock().map(|r| r.clone()).unwrap_or_default();
            return Err(Error::GpuLost { reason });
        }
        Ok(())
    }

    /// Waits for the queue; a failure means the device is gone.
    pub(crate) fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
            .map_err(|e| Error::GpuLost { reason: e.to_string() })?;
        self.check_alive()
    }
}

/// Binding 0: the dispatch's parameter slot; 1, 2: weights (read); 3, 4: activations and the
/// sequence state (read-write); 5: the chunk header, ids and slots (read).
fn bind_group_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let params = wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: wgpu::BufferSize::new(SLOT_BYTES),
        },
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("needle"),
        entries: &[
            params,
            storage(1, true),
            storage(2, true),
            storage(3, false),
            storage(4, false),
            storage(5, true),
        ],
    })
}

/// What `make` builds, or `GpuUnavailable` when the device refused any of it (a shader that
/// does not compile, a pipeline that does not validate): caught in an error scope, never a panic.
fn validated<T>(device: &wgpu::Device, make: impl FnOnce() -> T) -> Result<T> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let made = make();
    match block_on(scope.pop()) {
        Some(e) => Err(unavailable(std::format!("shader compilation failed: {e}"))),
        None => Ok(made),
    }
}

/// Every family's module (common prelude + the Hadamard helpers + the family) and pipelines;
/// the subgroup families only where `subgroups`.
fn pipelines(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    subgroups: bool,
) -> Result<Vec<(Kernel, wgpu::ComputePipeline)>> {
    validated(device, || compile(device, layout, subgroups))
}

fn compile(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    subgroups: bool,
) -> Vec<(Kernel, wgpu::ComputePipeline)> {
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("needle"),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    let mut out = Vec::new();
    for f in FAMILIES.iter().filter(|f| subgroups || !f.subgroups) {
        let source = if f.source == HADAMARD {
            std::format!("{COMMON}\n{HADAMARD}")
        } else {
            std::format!("{COMMON}\n{HADAMARD}\n{}", f.source)
        };
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(f.entries[0].entry()),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        for &k in f.entries {
            let p = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(k.entry()),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(k.entry()),
                compilation_options: Default::default(),
                cache: None,
            });
            out.push((k, p));
        }
    }
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_shader_the_device_refuses_is_gpu_unavailable() {
        if !crate::gpu::adapter_or_skip() {
            return;
        }
        let gpu = Gpu::new().unwrap();
        let broken = "@compute @workgroup_size(64) fn main() { let x: u32 = 1.5; }";
        let err = validated(&gpu.device, || {
            gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("broken"),
                source: wgpu::ShaderSource::Wgsl(broken.into()),
            })
        })
        .expect_err("a type error in WGSL is refused");
        assert_eq!(err.code(), "gpu_unavailable", "{err}");
        assert!(err.to_string().contains("shader compilation failed"), "{err}");
        // The device stays usable for a shader that compiles.
        assert!(validated(&gpu.device, || compile(&gpu.device, &gpu.layout, gpu.subgroups)).is_ok());
    }
}
