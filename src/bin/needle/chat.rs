//! `needle chat`: a conversation from stdin, one user turn per line (`/reset` starts over). Each
//! answer streams to stdout (or prints as one JSON envelope per line with `--json`); every turn
//! stays in the conversation, and the engine runs only the tokens a turn adds.
use std::io::{BufRead, Write};
use std::time::Instant;

use needle_web::json::Value;
use needle_web::prompt::{Role, Turn};
use needle_web::session::{Engine, Request};

use crate::model::{self, ms_since};
use crate::run::decoding;
use crate::{presets, Args, Failure};

pub const USAGE: &str = "chat [--model F] [--preset NAME | --tools T.json] [--system S] [--date D | --auto-date] [--max-tokens N] \
[--temperature X --seed N] [--constrained] [--kv f32|int8] [--numerics exact|deploy] [--max-context N] [--json]   (turns on stdin, /reset)";

/// Turns after which upstream warns that unrelated queries lose accuracy without a reset.
const UNRESET_TURNS: usize = 4;

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    let (tools, system) = presets::tools_and_system(&mut args)?;
    let date = model::date(&mut args)?;
    let mut template = Request::new("", &tools);
    template.system = system.as_deref();
    template.date = date.as_deref();
    decoding(&mut args, &mut template)?;
    let json = args.flag("--json");
    args.finish()?;

    let mut engine = Engine::load(&model.bytes, &options)?;
    let mut history: Vec<(Role, String)> = Vec::new();
    let mut out = std::io::stdout().lock();
    let io = |e| Failure::Io("stdout".into(), e);
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| Failure::Io("stdin".into(), e))?;
        let query = line.trim();
        if query.is_empty() {
            continue;
        }
        if query == "/reset" {
            // The engine keeps its state: the next prompt still shares the system prompt and
            // tools with it, and a cached prefix gives a fresh session's result anyway.
            history.clear();
            continue;
        }
        let turns: Vec<Turn> = history.iter().map(|(role, text)| Turn { role: *role, text }).collect();
        let req = Request { query, turns: &turns, ..template.clone() };
        let t0 = Instant::now();
        // A turn that does not fit is reported and left out; the conversation goes on.
        if let Err(e) = engine.start(&req) {
            eprintln!("needle chat: {e} [{}] (/reset starts over)", e.code());
            continue;
        }
        let prefill_ms = ms_since(t0);
        // Time to first token: prefill, then the first sample.
        let mut first_token_ms = None;
        while let Some(token) = engine.next_token()? {
            first_token_ms.get_or_insert_with(|| ms_since(t0));
            if !json {
                out.write_all(token.text.as_bytes()).and_then(|()| out.flush()).map_err(io)?;
            }
        }
        let done = engine.finish()?;
        let first_token_ms = first_token_ms.unwrap_or(prefill_ms);
        if json {
            let Value::Object(mut members) = done.to_value() else { unreachable!("an envelope is an object") };
            let timings = [("prefill_ms", prefill_ms), ("first_token_ms", first_token_ms)];
            members.push(("timings".into(), Value::Object(timings.map(|(k, v)| (k.into(), Value::Float(v))).into())));
            writeln!(out, "{}", Value::Object(members).to_json()).map_err(io)?;
        } else {
            writeln!(out).map_err(io)?;
            eprintln!(
                "[{} prompt tokens, {} reused; first token {first_token_ms:.1} ms; {} generated, stop: {}]",
                done.prompt_ids.len(),
                done.cached_tokens,
                done.tokens.len(),
                done.stop_reason.as_str()
            );
        }
        history.push((Role::User, query.to_owned()));
        history.push((Role::Assistant, done.response.text));
        if history.len() == 2 * UNRESET_TURNS + 2 {
            eprintln!(
                "needle chat: {UNRESET_TURNS} queries without /reset: every turn stays in the conversation, so unrelated \
                 queries lose accuracy and confidence; /reset between independent queries"
            );
        }
    }
    Ok(())
}
