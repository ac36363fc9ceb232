//! The GPU backend's refusals and failures, each a typed error, never a panic or a hang: no
//! adapter, an unknown `NEEDLE_GPU_KERNELS`, the subgroup kernels on an adapter without
//! subgroups, a buffer over the adapter's binding limit, Needle 2, deploy numerics, snapshots,
//! and a device lost between steps. One test: the environment variables that force the
//! failures are process-wide.
mod common;

use needle_web::gpu;
use needle_web::session::{Backend, Engine, GpuKernels, LoadOptions, Numerics, Request};
use needle_web::v3::{KvPrecision, Needle3Gpu};
use needle_web::Error;

fn default_model() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact")).unwrap()
}

fn gpu_options() -> LoadOptions {
    LoadOptions { kv: Some(KvPrecision::F32), backend: Backend::Gpu, ..LoadOptions::default() }
}

fn code(r: Result<Engine<'_>, Error>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

#[test]
fn every_gpu_failure_is_a_typed_error() {
    let bytes = default_model();
    // Needle 2 and deploy numerics are refused whatever the machine has.
    let v2 = std::fs::read(common::case_dirs(&common::fixtures().join("v2"))[0].join("model.cact"))
        .unwrap();
    assert_eq!(code(Engine::load(&v2, &gpu_options())), "unsupported");
    let deploy = LoadOptions { numerics: Numerics::Deploy, ..gpu_options() };
    assert_eq!(code(Engine::load(&bytes, &deploy)), "unsupported");

    std::env::set_var("NEEDLE_GPU_ADAPTER", "none");
    assert_eq!(code(Engine::load(&bytes, &gpu_options())), "gpu_unavailable");
    std::env::remove_var("NEEDLE_GPU_ADAPTER");

    // A kernel variant the build does not have is refused, not ignored (before any adapter).
    std::env::set_var("NEEDLE_GPU_KERNELS", "fast");
    assert_eq!(code(Engine::load(&bytes, &gpu_options())), "invalid_argument");
    std::env::remove_var("NEEDLE_GPU_KERNELS");

    if !gpu::adapter_or_skip() {
        return;
    }
    // The container alone exceeds a 64 KiB binding.
    std::env::set_var("NEEDLE_GPU_MAX_BINDING", "65536");
    let err = Engine::load(&bytes, &gpu_options()).err().expect("refused");
    std::env::remove_var("NEEDLE_GPU_MAX_BINDING");
    assert_eq!(err.code(), "gpu_unavailable", "{err}");
    assert!(err.to_string().contains("binding limit"), "{err}");

    // The subgroup kernels where the adapter offers no subgroups: refused, saying so; tiled
    // (the workgroup reduction) still loads there.
    std::env::set_var("NEEDLE_GPU_SUBGROUPS", "none");
    let kernels = |k| LoadOptions { gpu_kernels: Some(k), ..gpu_options() };
    let err = Engine::load(&bytes, &kernels(GpuKernels::Subgroup)).err().expect("refused");
    let tiled = code(Engine::load(&bytes, &kernels(GpuKernels::Tiled)));
    std::env::remove_var("NEEDLE_GPU_SUBGROUPS");
    assert_eq!(err.code(), "gpu_unavailable", "{err}");
    assert!(err.to_string().contains("offers no subgroups"), "{err}");
    assert_eq!(tiled, "ok");
    let kernels_of = |k| Engine::load(&bytes, &kernels(k)).unwrap().device_kernels();
    assert_eq!(kernels_of(GpuKernels::Tiled), Some(GpuKernels::Tiled));
    assert_eq!(kernels_of(GpuKernels::Plain), Some(GpuKernels::Plain));
    let cpu = LoadOptions { backend: Backend::Cpu, ..gpu_options() };
    assert_eq!(Engine::load(&bytes, &cpu).unwrap().device_kernels(), None);

    let mut engine = Engine::load(&bytes, &gpu_options()).unwrap();
    let tools = r#"[{"name":"set_timer","description":"Starts a timer.","parameters":{"type":"object","properties":{"minutes":{"type":"integer"}},"required":["minutes"]}}]"#;
    let req = Request::new("start a tea timer for 4 minutes", tools);
    assert_eq!(engine.save_snapshot(&req).err().map(|e| e.code()), Some("unsupported"));

    let options = needle_web::v3::Options {
        kv: KvPrecision::F32,
        numerics: needle_web::v3::Numerics::Exact,
        depth: 0,
        max_tokens: 64,
        prefill_chunk: 8,
        track_heads: false,
    };
    let container = needle_web::container::V3Container::parse(&bytes).unwrap();
    let depth = needle_web::v3::Model::new(&container).unwrap().geometry().num_layers;
    let mut net = Needle3Gpu::load(&bytes, &needle_web::v3::Options { depth, ..options }).unwrap();
    let mut logits = vec![0.0f32; net.model().logits_len()];
    net.prefill(&[1, 2, 3], &mut logits).unwrap();
    net.lose_device();
    let err = net.step(4, &mut logits).expect_err("a lost device fails the step");
    assert_eq!(err.code(), "gpu_lost", "{err}");
    let err = net.step(5, &mut logits).expect_err("and every step after it");
    assert_eq!(err.code(), "gpu_lost", "{err}");
}
