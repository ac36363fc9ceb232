//! `needle run`: one request through the session, streamed to stdout or reported as JSON.
use std::io::Write;
use std::time::Instant;

use needle_web::json::Value;
use needle_web::session::{Engine, Request, OPTIONS};

use crate::model::{self, ms_since};
use crate::presets;
use crate::snapshot;
use crate::{Args, Failure};

pub const USAGE: &str = "run [--model F] (--query Q | --query-file F) [--preset NAME | --tools T.json] [--system S] [--date D | --auto-date] [--max-tokens N] \
[--temperature X --seed N] [--top-k K] [--top-p P] [--constrained] [--extractive] [--value-search] [--require-call] [--full-schema] [--raw-markers] [--kv f32|int8] [--numerics exact|deploy] \
[--layers N] [--max-context N] [--backend cpu|gpu] [--gpu-kernels plain|tiled|subgroup] [--snapshot F] [--json]";

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    // --query-file: a query longer than one command-line argument may be (128 KiB on Linux).
    let query = match args.value("--query-file")? {
        Some(path) => std::fs::read_to_string(&path).map_err(|e| Failure::Io(path, e))?,
        None => args.required("--query")?,
    };
    let (tools, system) = presets::tools_and_system(&mut args)?;
    let date = model::date(&mut args)?;
    let options_object = decoding(&mut args)?;
    let mut req = Request::new(&query, &tools);
    req.system = system.as_deref();
    req.date = date.as_deref();
    req.apply(&options_object)?;
    let json = args.flag("--json");
    let snapshot = snapshot::path(&mut args)?;
    args.finish()?;

    let t0 = Instant::now();
    let mut engine = Engine::load(&model.bytes, &options)?;
    let load_ms = model.read_ms + ms_since(t0);
    let t0 = Instant::now();
    let snapshot_tokens = snapshot.map(|path| snapshot::load(&mut engine, &path)).transpose()?;
    let snapshot_ms = ms_since(t0);

    let t0 = Instant::now();
    engine.start(&req)?;
    let prefill_ms = ms_since(t0);
    let t0 = Instant::now();
    let mut out = std::io::stdout().lock();
    while let Some(token) = engine.next_token()? {
        if !json {
            out.write_all(token.text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| Failure::Io("stdout".into(), e))?;
        }
    }
    let decode_ms = ms_since(t0);
    let completion = engine.finish()?;

    if json {
        let Value::Object(mut members) = completion.to_value() else { unreachable!() };
        let ids = |v: &[u32]| Value::Array(v.iter().map(|&i| Value::Int(i.to_string())).collect());
        members.insert(0, ("prompt".into(), Value::String(completion.prompt.clone())));
        members.insert(1, ("prompt_ids".into(), ids(&completion.prompt_ids)));
        members.insert(2, ("tokens".into(), ids(&completion.tokens)));
        members.push((
            "timings".into(),
            Value::Object(vec![
                ("load_ms".into(), Value::Float(load_ms)),
                ("prefill_ms".into(), Value::Float(prefill_ms)),
                ("decode_ms".into(), Value::Float(decode_ms)),
                ("snapshot_ms".into(), Value::Float(snapshot_ms)),
            ]),
        ));
        if let Some(n) = snapshot_tokens {
            members.push(("snapshot_tokens".into(), Value::Int(n.to_string())));
        }
        members.push(("kv_bytes".into(), Value::Int(engine.kv_bytes().to_string())));
        writeln!(out, "{}", Value::Object(members).to_json())
            .map_err(|e| Failure::Io("stdout".into(), e))?;
    } else {
        let n = completion.tokens.len();
        writeln!(out).ok();
        eprintln!(
            "[{} prompt + {n} generated tokens, stop: {}; load {load_ms:.1} ms, prefill {prefill_ms:.1} ms, decode {decode_ms:.1} ms ({:.1} tok/s)]",
            completion.prompt_ids.len(),
            completion.stop_reason.as_str(),
            if decode_ms > 0.0 { n as f64 * 1e3 / decode_ms } else { 0.0 }
        );
        eprintln!("{}", completion.to_value().to_json());
    }
    Ok(())
}

/// Takes the flags of the request options the CLI passes as flags (`session::OPTIONS`:
/// `--max-tokens`, `--temperature`, `--seed`, ..., `--raw-markers`) into an options object, the
/// one a JS request sends; `Request::apply` then reads it with the same checks and defaults.
pub fn decoding(args: &mut Args) -> Result<Value, Failure> {
    let mut members = Vec::new();
    for option in OPTIONS {
        let Some(flag) = option.flag else { continue };
        let value = model::flag_value(args, option.kind, flag)?;
        members.extend(value.map(|v| (option.name.to_string(), v)));
    }
    Ok(Value::Object(members))
}
