//! The GPU backend against upstream's own outputs: every Needle 3 fixture through
//! `gpu::Needle3Gpu`, prefill then teacher-forced greedy steps, checked exactly as
//! `v3_parity.rs` checks the CPU path (f32: 1e-4 of each row's largest logit and every greedy
//! token; int8 KV: the tolerance the generator measured). Skips, saying why, only where no GPU
//! adapter exists (CI installs Mesa's lavapipe, a CPU Vulkan driver, and sets
//! `NEEDLE_REQUIRE_GPU=1`, which makes a missing adapter fail); a shader of ours that does not
//! compile on an adapter fails (`gpu::adapter_or_skip`).
mod common;

use common::{argmax, check_rows, get, ids, Case};
use needle_web::container::V3Container;
use needle_web::gpu;
use needle_web::session::GpuKernels;
use needle_web::v3::{KvPrecision, Model, Needle3Gpu, Numerics, Options};

/// Each kernel variant with its own prefill chunk and a chunk of 5 (chunks end mid-tile). The
/// subgroup ones run where the adapter offers subgroups (`gpu::subgroups_or_skip` says when not).
const VARIANTS: [(GpuKernels, usize); 6] = [
    (GpuKernels::Plain, 16),
    (GpuKernels::Plain, 5),
    (GpuKernels::Tiled, 64),
    (GpuKernels::Tiled, 5),
    (GpuKernels::Subgroup, 64),
    (GpuKernels::Subgroup, 5),
];

/// The variants this adapter runs: the subgroup kernels only where it offers subgroups.
fn runs_here(kernels: GpuKernels, subgroups: bool) -> bool {
    kernels != GpuKernels::Subgroup || subgroups
}

fn options(case: &Case, kv: KvPrecision, chunk: usize) -> Options {
    let container = V3Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    Options { kv, numerics: Numerics::Exact, prefill_chunk: chunk, ..model.default_options() }
}

/// Prefills the prompt, then steps the recorded greedy tokens, on the GPU.
fn run(
    case: &Case,
    mode_name: &str,
    kv: KvPrecision,
    (kernels, chunk): (GpuKernels, usize),
) -> Option<(f64, f64, usize)> {
    let mode = case.json.get("modes")?.get(mode_name)?;
    let mut net = Needle3Gpu::load_with(&case.bytes, &options(case, kv, chunk), kernels).unwrap();
    let prompt = ids(get(&case.json, "prompt_ids"));
    let greedy = ids(get(mode, "greedy"));
    let v = net.model().logits_len();
    let mut rows = vec![0.0f32; (prompt.len() + greedy.len()) * v];
    net.prefill_rows(&prompt, &mut rows[..prompt.len() * v]).unwrap();
    let mut ours = Vec::new();
    for (k, &t) in greedy.iter().enumerate() {
        let at = prompt.len() - 1 + k;
        ours.push(argmax(&rows[at * v..(at + 1) * v]));
        net.step(t, &mut rows[(at + 1) * v..(at + 2) * v]).unwrap();
    }
    let r = check_rows(case, mode_name, mode, mode_name == "f32", &rows, v, &ours);
    Some((r.worst, r.bar, r.tokens_checked))
}

fn check_all(mode: &str, kv: KvPrecision) {
    if !gpu::adapter_or_skip() {
        return;
    }
    let mut seen = 0;
    let subgroups = gpu::subgroups_or_skip();
    for case in common::cases("v3") {
        for variant @ (kernels, chunk) in VARIANTS {
            if !runs_here(kernels, subgroups) {
                continue;
            }
            if let Some((worst, bar, tokens)) = run(&case, mode, kv, variant) {
                eprintln!(
                    "gpu v3 {mode:4} {kernels:?} chunk {chunk:2} {:24} worst row deviation {worst:.3e} (bar {bar:.3e}), greedy tokens checked: {tokens}",
                    case.name
                );
                seen += 1;
            }
        }
    }
    assert!(seen > 0, "no case records mode {mode}");
}

#[test]
fn f32_logits_and_every_greedy_token_match_the_exact_reference_on_the_gpu() {
    check_all("f32", KvPrecision::F32);
}

#[test]
fn the_int8_kv_cache_matches_the_kv8_reference_on_the_gpu() {
    check_all("kv8", KvPrecision::Int8);
}

/// The session on the GPU backend: value search (which marks and rewinds the sequence),
/// constrained decoding and the prefix cache (the second request reuses the first's system
/// prompt and tools) give the CPU backend's tokens on the shipped default model, for smart-home
/// requests the model answers with calls (so value search has argument values to search). The
/// GPU engine reports its buffers: more than the container (codes, floats, activations, state),
/// none on the CPU.
#[test]
fn requests_on_the_gpu_backend_write_the_cpu_backends_tokens() {
    use needle_web::session::{Backend, Engine, LoadOptions, Request};
    if !gpu::adapter_or_skip() {
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("www/models/default.cact")).unwrap();
    let preset = common::load_json(&root.join("www/presets/smart_home.json"));
    let tools = preset.get("tools").unwrap().to_json();
    let system = preset.get("system").and_then(|s| s.as_str()).map(str::to_owned);
    let queries = ["Turn on the kitchen lights", "dim the bedroom lights to 30%"];
    let run = |backend, gpu_kernels| {
        let kv = Some(KvPrecision::F32);
        let options = LoadOptions { kv, backend, gpu_kernels, ..LoadOptions::default() };
        let mut engine = Engine::load(&bytes, &options).unwrap();
        let (mut out, mut confidence) = (Vec::new(), Vec::new());
        for q in queries {
            let mut req = Request::new(q, &tools);
            req.system = system.as_deref();
            req.max_tokens = 64;
            req.value_search = true;
            let done = engine.generate(&req, |_| true).unwrap();
            out.push((done.tokens, done.cached_tokens, done.response.function_calls));
            confidence.push(done.confidence.unwrap());
        }
        (out, confidence, engine.device_bytes())
    };
    let (cpu, cpu_conf, cpu_bytes) = run(Backend::Cpu, None);
    assert_eq!(cpu_bytes, 0);
    for (q, (_, _, calls)) in queries.iter().zip(&cpu) {
        let with_values = calls.iter().any(|c| c.arguments.to_json().len() > 2);
        assert!(with_values, "{q}: a call with argument values, got {calls:?}");
    }
    assert!(cpu[1].1 > 0, "the second request reused the cached prefix");
    let subgroups = gpu::subgroups_or_skip();
    for kernels in [GpuKernels::Plain, GpuKernels::Tiled, GpuKernels::Subgroup] {
        if !runs_here(kernels, subgroups) {
            continue;
        }
        let (gpu, gpu_conf, gpu_bytes) = run(Backend::Gpu, Some(kernels));
        eprintln!("gpu session {kernels:?}: device_bytes {gpu_bytes}");
        assert!(gpu_bytes > bytes.len() as u64, "GPU buffers {gpu_bytes} B");
        assert_eq!(gpu, cpu, "{kernels:?}");
        // The confidence head pools the whole sequence: a position that value search failed to
        // rewind shows here even where the calls come out the same.
        for (g, c) in gpu_conf.iter().zip(&cpu_conf) {
            assert!((g - c).abs() <= 1e-4, "{kernels:?} confidence: gpu {g}, cpu {c}");
        }
    }
}

/// The probe heads pool the cells the GPU reads back with the logits: their outputs match
/// upstream's, prefilled in chunks of 16 (plain kernels) and of 3 (tiled, subgroup).
#[test]
fn probe_heads_on_the_gpu_match_the_reference() {
    use common::{deviation, floats, F32_BAR};
    use needle_web::v3::HeadKind;
    if !gpu::adapter_or_skip() {
        return;
    }
    let mut present = 0;
    let subgroups = gpu::subgroups_or_skip();
    for case in common::cases("v3") {
        let heads = get(&case.json, "heads");
        for (name, kind) in [
            ("embedding", HeadKind::Embedding),
            ("confidence", HeadKind::Confidence),
            ("router", HeadKind::Router),
        ] {
            let Some(h) = heads.get(name) else { continue };
            let tokens = ids(get(h, "tokens"));
            let want = floats(get(h, "output"));
            for (kernels, chunk) in
                [(GpuKernels::Plain, 16), (GpuKernels::Tiled, 3), (GpuKernels::Subgroup, 3)]
            {
                if !runs_here(kernels, subgroups) {
                    continue;
                }
                let opts = Options { track_heads: true, ..options(&case, KvPrecision::F32, chunk) };
                let mut net = Needle3Gpu::load_with(&case.bytes, &opts, kernels).unwrap();
                let mut row = vec![0.0f32; net.model().logits_len()];
                net.prefill(&tokens, &mut row).unwrap();
                let got = net.head(kind).unwrap();
                let dev = deviation(&got, &want);
                eprintln!(
                    "gpu v3 head {:24} {name:10} chunk {chunk:2} deviation {dev:.3e}",
                    case.name
                );
                assert_eq!(got.len(), want.len(), "{} {name}: output width", case.name);
                assert!(dev <= F32_BAR, "{} {name}: deviates by {dev:.3e}", case.name);
                present += 1;
            }
        }
    }
    assert!(present > 0, "no case records a probe head");
}
