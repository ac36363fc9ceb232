//! `needle extract`: one-shot structured extraction, as upstream's `extract(text, schema)`.
//! The schema is the only tool and decoding is schema-constrained; stdout gets the arguments of
//! the call as JSON, or `null` when the model declines. Strict (the default): values the text
//! does not license (see `needle_web::grounding`), or a negated request, fail with
//! `[ungrounded]` and exit status 1. The date fact is off unless asked (`--date D`,
//! `--auto-date`): the embedded model, trained without it, answers worse with it.
use std::io::Write;

use needle_web::json::{self, Value};
use needle_web::session::{Engine, Request};

use crate::model::{self, number};
use crate::{Args, Failure};

pub const USAGE: &str = "extract [--model F] --schema S.json --text T [--system S] [--date D | --auto-date] [--no-strict] \
[--max-tokens N] [--kv f32|int8] [--numerics exact|deploy]";

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    let path = args.required("--schema")?;
    let schema = std::fs::read_to_string(&path).map_err(|e| Failure::Io(path, e))?;
    let tool = as_tool(json::parse(&schema)?);
    let tools = Value::Array(vec![tool]).to_json();
    let text = args.required("--text")?;
    let system = args.value("--system")?;
    let date = model::date(&mut args)?;
    let strict = !args.flag("--no-strict");
    let mut req = Request::new(&text, &tools);
    req.system = system.as_deref();
    req.date = date.as_deref();
    req.constrained = true;
    req.max_tokens = number(&mut args, "--max-tokens")?.unwrap_or(req.max_tokens);
    args.finish()?;

    let mut engine = Engine::load(&model.bytes, &options)?;
    let done = engine.generate(&req, |_| true)?;
    let Some(call) = done.response.function_calls.first() else {
        return print(&Value::Null);
    };
    let mut failures = done.validation.ungrounded.clone();
    if done.validation.negation {
        failures.push("negated request".into());
    }
    if strict && !failures.is_empty() {
        return Err(Failure::Ungrounded(failures));
    }
    print(&call.arguments)
}

/// A tool schema (`{name, parameters, ...}`) as it is; a bare JSON schema becomes the
/// parameters of a tool named by its `title` (else `extract`).
fn as_tool(schema: Value) -> Value {
    if schema.get("parameters").is_some() || schema.get("name").is_some() {
        return schema;
    }
    let name = schema.get("title").and_then(Value::as_str).unwrap_or("extract").to_owned();
    Value::Object(vec![("name".into(), Value::String(name)), ("parameters".into(), schema)])
}

fn print(value: &Value) -> Result<(), Failure> {
    writeln!(std::io::stdout().lock(), "{}", value.to_json())
        .map_err(|e| Failure::Io("stdout".into(), e))
}
