//! `needle bench`: one benchmark run of the native engine, for tools/bench/run.mjs.
//!
//! Runs a list of requests in one session, in order, as a client would send them, and prints
//! one JSON record per line: `load` (bytes in hand -> engine ready), one `request` record per
//! request, and `memory` (the process's peak resident set). The JS harness
//! (tools/bench/harness.mjs) prints the same records for the wasm builds, so the orchestrator
//! treats every variant alike. Timing belongs here, not in the library: the core has no clock.
//!
//! `--ids` prints each request's rendered prompt ids instead (`{"name", "ids"}`), which is how
//! the peer runtime is handed exactly the sequences we run.
use std::io::Write;
use std::time::Instant;

use needle_web::json::{self, Value};
use needle_web::session::{Engine, Request};

use crate::model::{self, ms_since};
use crate::{Args, Failure};

pub const USAGE: &str = "bench --model F --requests R.json [--ids] [--kv f32|int8] [--numerics exact|deploy] [--max-context N] [--backend cpu|gpu] [--gpu-kernels plain|tiled|subgroup]   \
(R.json: [{name, query, system, tools, max_tokens}]; one JSON record per line)";

/// One request of the benchmark's workload, owned.
struct Job {
    name: String,
    query: String,
    system: Option<String>,
    tools: String,
    max_tokens: usize,
}

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    let path = args.required("--requests")?;
    let ids_only = args.flag("--ids");
    args.finish()?;
    let text = std::fs::read_to_string(&path).map_err(|e| Failure::Io(path.clone(), e))?;
    let jobs = jobs(&json::parse(&text)?).ok_or_else(|| {
        Failure::Usage(format!("{path}: expected [{{name, query, system, tools, max_tokens}}]"))
    })?;

    let t0 = Instant::now();
    let mut engine = Engine::load(&model.bytes, &options)?;
    let load_ms = ms_since(t0);
    let mut out = std::io::stdout().lock();
    let mut emit = |record: Value| {
        writeln!(out, "{}", record.to_json()).map_err(|e| Failure::Io("stdout".into(), e))
    };

    if ids_only {
        for job in &jobs {
            let prompt = engine.render(&job.query, &job.tools, job.system.as_deref())?;
            let ids =
                engine.prompt_ids(&prompt).into_iter().map(|i| Value::Int(i.to_string())).collect();
            emit(object(vec![
                ("name", Value::String(job.name.clone())),
                ("ids", Value::Array(ids)),
            ]))?;
        }
        return Ok(());
    }

    emit(object(vec![
        ("kind", Value::String("load".into())),
        ("load_ms", Value::Float(load_ms)),
        ("container_bytes", Value::Int(model.bytes.len().to_string())),
        // Every GPU buffer (`--backend gpu`; 0 on the CPU): the weights as stored, activations, state.
        ("device_bytes", Value::Int(engine.device_bytes().to_string())),
        ("device", Value::String(engine.device_name().unwrap_or("cpu").into())),
        // The GPU kernel variant the engine loaded (null on the CPU), so a run names what it timed.
        (
            "kernels",
            engine.device_kernels().map_or(Value::Null, |k| Value::String(k.name().into())),
        ),
    ]))?;
    for job in &jobs {
        let mut req = Request::new(&job.query, &job.tools);
        req.system = job.system.as_deref();
        req.max_tokens = job.max_tokens;
        let t0 = Instant::now();
        let prompt_tokens = engine.start(&req)?;
        let prefill_ms = ms_since(t0);
        // The first token comes from the prefill's logits; each later one runs a forward step.
        let first = engine.next_token()?;
        let ttft_ms = ms_since(t0);
        let (mut decoded, t1) = (0usize, Instant::now());
        if first.is_some() {
            while engine.next_token()?.is_some() {
                decoded += 1;
            }
        }
        let decode_ms = ms_since(t1);
        let completion = engine.finish()?;
        emit(object(vec![
            ("kind", Value::String("request".into())),
            ("name", Value::String(job.name.clone())),
            ("prompt_tokens", Value::Int(prompt_tokens.to_string())),
            ("prefill_ms", Value::Float(prefill_ms)),
            ("ttft_ms", Value::Float(ttft_ms)),
            ("decode_ms", Value::Float(decode_ms)),
            ("decoded", Value::Int(decoded.to_string())),
            ("stop", Value::String(completion.stop_reason.as_str().into())),
            ("kv_bytes", Value::Int(engine.kv_bytes().to_string())),
        ]))?;
    }
    emit(object(vec![
        ("kind", Value::String("memory".into())),
        ("peak_bytes", Value::Int(peak_rss().to_string())),
    ]))
}

fn jobs(value: &Value) -> Option<Vec<Job>> {
    value
        .as_array()?
        .iter()
        .map(|r| {
            Some(Job {
                name: r.get("name")?.as_str()?.to_string(),
                query: r.get("query")?.as_str()?.to_string(),
                system: r.get("system").and_then(Value::as_str).map(str::to_string),
                tools: r.get("tools").and_then(Value::as_str).unwrap_or("").to_string(),
                max_tokens: match r.get("max_tokens")? {
                    Value::Int(n) => n.parse().ok()?,
                    _ => return None,
                },
            })
        })
        .collect()
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The process's resident high-water mark in bytes (Linux; 0 where /proc is missing).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
