//! What the model-running subcommands share: reading the container (a file, or the embedded
//! default model), the load options (`--kv`, `--numerics`, `--layers`, `--max-context`,
//! `--gpu-kernels`, `--backend`) and the flags of an options object.
use std::borrow::Cow;
use std::time::Instant;

use needle_web::json::Value;
use needle_web::session::{Backend, Kind, LoadOptions, LOAD_OPTIONS};

use crate::{Args, Failure};

/// The embedded default model (the small Needle 3 of tools/train/, trained on upstream's six
/// tool environments), so the CLI answers with no file at hand, as the demo page does.
const EMBEDDED_MODEL: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact"));

/// A container's bytes and where they came from.
pub struct Model {
    pub bytes: Cow<'static, [u8]>,
    pub source: String,
    pub read_ms: f64,
}

/// Takes `--model FILE` and reads it whole, timing the read; without it, the embedded model.
pub fn read(args: &mut Args) -> Result<Model, Failure> {
    let Some(path) = args.path("--model")? else {
        return Ok(Model {
            bytes: Cow::Borrowed(EMBEDDED_MODEL),
            source: "(embedded default model)".into(),
            read_ms: 0.0,
        });
    };
    let t0 = Instant::now();
    // Shown lossily in messages and `--json`; opened as given.
    let source = path.to_string_lossy().into_owned();
    let bytes = std::fs::read(&path).map_err(|e| Failure::Io(source.clone(), e))?;
    Ok(Model { bytes: Cow::Owned(bytes), source, read_ms: ms_since(t0) })
}

/// Takes the load options' flags (`session::LOAD_OPTIONS`: `--kv f32|int8`, `--numerics
/// exact|deploy`, `--layers N`, `--max-context N`, `--gpu-kernels plain|tiled|subgroup`, which
/// overrides `NEEDLE_GPU_KERNELS`) into an options object, the one a JS load
/// sends, read by `LoadOptions::from_options` with the same checks and defaults; and `--backend
/// cpu|gpu` (gpu: builds with the `gpu` feature).
pub fn options(args: &mut Args) -> Result<LoadOptions, Failure> {
    let mut members = Vec::new();
    for option in LOAD_OPTIONS {
        let value = flag_value(args, option.kind, option.flag)?;
        members.extend(value.map(|v| (option.name.to_string(), v)));
    }
    let backend = match args.value("--backend")?.as_deref() {
        None | Some("cpu") => Backend::Cpu,
        Some("gpu") => Backend::Gpu,
        Some(other) => {
            return Err(Failure::Usage(format!("--backend must be cpu or gpu, not '{other}'")))
        }
    };
    Ok(LoadOptions { backend, ..LoadOptions::from_options(&Value::Object(members))? })
}

/// Takes the value of an option of `kind` passed as `flag`, as an options object holds it.
pub fn flag_value(
    args: &mut Args,
    kind: Kind,
    flag: &'static str,
) -> Result<Option<Value>, Failure> {
    Ok(match kind {
        Kind::Flag => args.flag(flag).then_some(Value::Bool(true)),
        Kind::Count | Kind::Seed => number::<u64>(args, flag)?.map(|n| Value::Int(n.to_string())),
        Kind::Number => number::<f64>(args, flag)?.map(Value::Float),
        Kind::Text => args.value(flag)?.map(Value::String),
    })
}

/// Takes `--date "YYYY-MM-DD Ddd HH:MM"` or `--auto-date` (this machine's clock, in UTC: the
/// CLI carries no time-zone data): the date fact's value, prefixed to the system text by
/// upstream's `auto_date` rule. Neither: no date fact, the prompt as upstream's one-shot CLI
/// renders it.
pub fn date(args: &mut Args) -> Result<Option<String>, Failure> {
    let auto = args.flag("--auto-date");
    match (args.value("--date")?, auto) {
        (Some(_), true) => {
            Err(Failure::Usage("--date and --auto-date both give the date: pass one".into()))
        }
        (Some(date), false) => Ok(Some(date)),
        (None, true) => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            Ok(Some(needle_web::grounding::fact_from_unix(secs, 0)))
        }
        (None, false) => Ok(None),
    }
}

/// Takes an optional numeric option.
pub fn number<T: std::str::FromStr>(
    args: &mut Args,
    name: &'static str,
) -> Result<Option<T>, Failure> {
    args.value(name)?
        .map(|v| {
            v.parse().map_err(|_| Failure::Usage(format!("{name} must be a number, not '{v}'")))
        })
        .transpose()
}

/// Parses `2,17,5` into ids.
pub fn ids(list: &str) -> Result<Vec<u32>, Failure> {
    list.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().map_err(|_| Failure::Usage(format!("'{s}' is not a token id"))))
        .collect()
}

pub fn ms_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}
