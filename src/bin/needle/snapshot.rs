//! `needle snapshot`: prefills a system prompt and tool list and writes the prefix snapshot
//! (`session/snapshot.rs`) an app ships so its first request skips that prefill; `needle run
//! --snapshot F` loads one.
use std::fs::File;
use std::io::Read;
use std::time::Instant;

use needle_web::session::{Engine, Request, SNAPSHOT_HEADER_LEN};

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

/// Takes `--snapshot F`: the snapshot's path.
pub fn path(args: &mut Args) -> Result<Option<String>, Failure> {
    args.value("--snapshot")
}

/// Loads the snapshot at `path` into `engine`; returns how many prefix ids it holds. The
/// header is read and checked first, then no more of the file than the length it names (and
/// one byte, so a longer file is refused): a file of any size costs at most one snapshot.
pub fn load(engine: &mut Engine, path: &str) -> Result<usize, Failure> {
    let io = |e| Failure::Io(path.to_owned(), e);
    let mut file = File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.by_ref().take(SNAPSHOT_HEADER_LEN as u64).read_to_end(&mut bytes).map_err(io)?;
    let len = engine.snapshot_len(&bytes)?;
    file.take((len + 1 - bytes.len()) as u64).read_to_end(&mut bytes).map_err(io)?;
    Ok(engine.load_snapshot(&bytes)?)
}
