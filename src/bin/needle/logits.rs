//! `needle logits`: the logits at every position of a token sequence, as JSON rows or raw
//! little-endian f32 (row-major) into a file.
use needle_web::json::Value;
use needle_web::session::Engine;

use crate::model;
use crate::{Args, Failure};

pub const USAGE: &str =
    "logits [--model F] --tokens 2,17,... [--kv f32|int8] [--numerics exact|deploy] [--layers N] \
[--backend cpu|gpu] [--gpu-kernels plain|tiled|subgroup] [--out file.f32]";

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    let ids = model::ids(&args.required("--tokens")?)?;
    let out = args.value("--out")?;
    args.finish()?;

    let mut engine = Engine::load(&model.bytes, &options)?;
    let rows = engine.logits_for(&ids)?;
    match out {
        Some(path) => {
            let raw: Vec<u8> = rows.iter().flat_map(|v| v.to_le_bytes()).collect();
            std::fs::write(&path, raw).map_err(|e| Failure::Io(path, e))?;
        }
        None => {
            let width = engine.info().logits_len;
            let json = Value::Array(
                rows.chunks(width)
                    .map(|row| Value::Array(row.iter().map(|&v| Value::Float(v as f64)).collect()))
                    .collect(),
            );
            println!("{}", json.to_json());
        }
    }
    Ok(())
}
