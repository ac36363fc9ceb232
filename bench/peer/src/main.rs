//! The published Needle runtime (`needle-infer` / `needle-core` 0.3.1) as a benchmark peer.
//!
//! A black box driven through its documented public API only: Needle 3 through
//! `V3Engine::from_bytes`, its `model`'s `prefill` / `decode_step` and `V3Cache`; Needle 2
//! through `V2Engine::from_bytes`, its model's `prefill_batch` / `step` and `V2State` (the
//! generation comes from the container's tag; `--kv` applies to Needle 3 only). Built natively and for wasm32-wasip1
//! (run under Node's WASI by tools/bench/peer-wasi.mjs), it runs the plan tools/bench/run.mjs
//! writes and prints one JSON line per measurement, the same records our harnesses print.
//!
//!   needle-bench-peer --model F.cact --plan plan.txt [--kv int8|f32]
//!
//! plan.txt: one request per line, `NAME GEN ID,ID,...` (prompt ids rendered and tokenized by
//! needle-web, so both runtimes see the same sequence). The peer has no prefix cache: each
//! request, a repeated one included, prefills its whole prompt into a fresh cache.
use std::time::Instant;

use needle_core::v2::batch::{V2Batch, DEFAULT_CHUNK};
use needle_core::v3::cache::{KvPrecision, V3Cache};
use needle_infer::cact::TAG_V3;
use needle_infer::v2_engine::V2Engine;
use needle_infer::v3_engine::V3Engine;

struct Request {
    name: String,
    gen: usize,
    ids: Vec<u32>,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("needle-bench-peer: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut model, mut plan, mut kv) = (None, None, KvPrecision::Int8);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--model" => model = Some(value()?),
            "--plan" => plan = Some(value()?),
            "--kv" => {
                kv = match value()?.as_str() {
                    "int8" => KvPrecision::Int8,
                    "f32" => KvPrecision::F32,
                    other => return Err(format!("--kv must be int8 or f32, not {other}")),
                }
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let model = model.ok_or("--model is required")?;
    let plan =
        std::fs::read_to_string(plan.ok_or("--plan is required")?).map_err(|e| e.to_string())?;
    let requests = parse_plan(&plan)?;

    let bytes = std::fs::read(&model).map_err(|e| format!("{model}: {e}"))?;
    let is_v3 = bytes.get(..4) == Some(&TAG_V3.to_le_bytes()[..]);
    let t0 = Instant::now();
    // Each generation: load, then one closure running a request from a fresh state.
    let mut run_one: Box<dyn FnMut(&Request) -> Result<Measured, String>> = if is_v3 {
        let engine = V3Engine::from_bytes(bytes).map_err(|e| format!("{model}: {e:?}"))?;
        Box::new(move |r| v3_request(&engine, r, kv))
    } else {
        let engine = V2Engine::from_bytes(bytes).map_err(|e| format!("{model}: {e:?}"))?;
        let batch = V2Batch::new(engine.model(), DEFAULT_CHUNK);
        let mut state = (engine, batch);
        Box::new(move |r| v2_request(&state.0, &mut state.1, r))
    };
    println!("{{\"kind\":\"load\",\"load_ms\":{:.3}}}", ms(t0));

    for r in &requests {
        let m = run_one(r)?;
        println!(
            "{{\"kind\":\"request\",\"name\":\"{}\",\"prompt_tokens\":{},\"prefill_ms\":{:.3},\"ttft_ms\":{:.3},\
             \"decode_ms\":{:.3},\"decoded\":{},\"kv_bytes\":{}}}",
            r.name,
            r.ids.len(),
            m.prefill_ms,
            m.prefill_ms,
            m.decode_ms,
            m.decoded,
            m.kv_bytes
        );
    }
    println!("{{\"kind\":\"memory\",\"peak_bytes\":{}}}", peak_bytes());
    Ok(())
}

/// One request's timings: the prefill (which yields the first token) and the decode steps after it.
struct Measured {
    prefill_ms: f64,
    decode_ms: f64,
    decoded: usize,
    kv_bytes: usize,
}

fn v3_request(engine: &V3Engine, r: &Request, kv: KvPrecision) -> Result<Measured, String> {
    let m = &engine.model;
    let mut cache = V3Cache::with_precision(&m.cfg, r.ids.len() + r.gen, kv);
    let t0 = Instant::now();
    let mut next = argmax(&m.prefill(&r.ids, &mut cache));
    let prefill_ms = ms(t0);
    let t1 = Instant::now();
    for _ in 1..r.gen {
        next = argmax(&m.decode_step(&mut cache, next));
    }
    let decode_ms = ms(t1);
    let decoded = r.gen.saturating_sub(1);
    if cache.pos() != r.ids.len() + decoded {
        return Err(format!(
            "v3 cache at {} after {} + {decoded} tokens",
            cache.pos(),
            r.ids.len()
        ));
    }
    Ok(Measured { prefill_ms, decode_ms, decoded, kv_bytes: cache.bytes() })
}

fn v2_request(engine: &V2Engine, batch: &mut V2Batch, r: &Request) -> Result<Measured, String> {
    let m = engine.model();
    let mut state = m.make_state();
    let mut logits = vec![0.0; m.cfg.vocab_size];
    let t0 = Instant::now();
    m.prefill_batch(&r.ids, &mut state, batch, Some(&mut logits))?;
    let mut next = argmax(&logits);
    let prefill_ms = ms(t0);
    let t1 = Instant::now();
    for _ in 1..r.gen {
        m.step(next, &mut state, &mut logits)?;
        next = argmax(&logits);
    }
    let decode_ms = ms(t1);
    let decoded = r.gen.saturating_sub(1);
    if state.pos() != r.ids.len() + decoded {
        return Err(format!(
            "v2 state at {} after {} + {decoded} tokens",
            state.pos(),
            r.ids.len()
        ));
    }
    Ok(Measured { prefill_ms, decode_ms, decoded, kv_bytes: state.kv_bytes() })
}

fn parse_plan(text: &str) -> Result<Vec<Request>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split_whitespace();
            let (Some(name), Some(gen), Some(ids)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(format!("bad plan line: {line}"));
            };
            let gen = gen.parse().map_err(|_| format!("bad token count in: {line}"))?;
            let ids = ids
                .split(',')
                .map(|s| s.parse().map_err(|_| format!("bad id {s}")))
                .collect::<Result<_, _>>()?;
            Ok(Request { name: name.to_string(), gen, ids })
        })
        .collect()
}

fn argmax(row: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best as u32
}

fn ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// Peak memory: the resident high-water mark natively, linear memory in wasm (it never shrinks).
#[cfg(target_arch = "wasm32")]
fn peak_bytes() -> usize {
    core::arch::wasm32::memory_size(0) * 65536
}

#[cfg(not(target_arch = "wasm32"))]
fn peak_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}
