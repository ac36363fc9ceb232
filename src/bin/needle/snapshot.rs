//! `needle snapshot`: prefills a system prompt and tool list and writes the prefix snapshot
//! (`session/snapshot.rs`) an app ships so its first request skips that prefill; `needle run
//! --snapshot F` loads one.
use std::time::Instant;

use needle_web::session::{Engine, Request};

use crate::model::{self, ms_since};
use crate::presets;
use crate::{Args, Failure};

pub const USAGE: &str =
    "snapshot [--model F] (--preset NAME | --tools T.json) [--system S] [--date D] \
[--raw-markers] [--kv f32|int8] [--numerics exact|deploy] [--layers N] [--max-context N] --out F";

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    let (tools, system) = presets::tools_and_system(&mut args)?;
    let date = model::date(&mut args)?;
    let raw = args.flag("--raw-markers");
    let out = args.required("--out")?;
    args.finish()?;
    let mut req = Request::new("", &tools);
    req.system = system.as_deref();
    req.date = date.as_deref();
    req.allow_control_tokens = raw;

    let mut engine = Engine::load(&model.bytes, &options)?;
    let t0 = Instant::now();
    let bytes = engine.save_snapshot(&req)?;
    let prefill_ms = ms_since(t0);
    std::fs::write(&out, &bytes).map_err(|e| Failure::Io(out.clone(), e))?;
    eprintln!(
        "[{} prefix tokens prefilled in {prefill_ms:.1} ms; snapshot {} bytes, kv_bytes {}] -> {out}",
        engine.position(),
        bytes.len(),
        engine.kv_bytes()
    );
    Ok(())
}

/// Takes `--snapshot F`: the snapshot's bytes.
pub fn load(args: &mut Args) -> Result<Option<Vec<u8>>, Failure> {
    args.value("--snapshot")?
        .map(|path| std::fs::read(&path).map_err(|e| Failure::Io(path, e)))
        .transpose()
}
