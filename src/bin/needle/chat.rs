//! `needle chat`: a conversation from stdin, one user turn per line (`/reset` starts over). Each
//! answer streams to stdout (or prints as one JSON envelope per line with `--json`); every turn
//! stays in the conversation, and the engine runs only the tokens a turn adds.
use std::io::{BufRead, Write};
use std::time::Instant;

use needle_web::json::Value;
use needle_web::prompt::Role;
use needle_web::session::{Conversation, Engine, Request, UNRESET_TURNS};

use crate::model::{self, ms_since};
use crate::run::decoding;
use crate::{presets, Args, Failure};

pub const USAGE: &str = "chat [--model F] [--preset NAME | --tools T.json] [--system S] [--date D | --auto-date] [--max-tokens N] \
[--temperature X --seed N] [--constrained] [--kv f32|int8] [--numerics exact|deploy] [--max-context N] [--json]   (turns on stdin, /reset)";

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let options = model::options(&mut args)?;
    let (tools, system) = presets::tools_and_system(&mut args)?;
    let date = model::date(&mut args)?;
    let options_object = decoding(&mut args)?;
    let mut template = Request::new("", &tools);
    template.system = system.as_deref();
    template.date = date.as_deref();
    template.apply(&options_object)?;
    let json = args.flag("--json");
    args.finish()?;

    let mut engine = Engine::load(&model.bytes, &options)?;
    let mut conversation = Conversation::new();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| Failure::Io("stdin".into(), e))?;
        let query = line.trim();
        if query.is_empty() {
            continue;
        }
        if query == "/reset" {
            conversation.reset();
            continue;
        }
        let t0 = Instant::now();
        // Time to first token: prefill, then the first sample.
        let mut first_token_ms = None;
        let mut written = Ok(());
        let sent = conversation.send(&mut engine, &template, Role::User, query, |token| {
            first_token_ms.get_or_insert_with(|| ms_since(t0));
            if !json {
                written = out.write_all(token.text.as_bytes()).and_then(|()| out.flush());
            }
            written.is_ok()
        });
        written.map_err(io)?;
        let done = match sent {
            Ok(done) => done,
            // A turn that does not fit is reported and left out; the conversation goes on.
            Err(e) if e.code() == "context_full" => {
                eprintln!("needle chat: {e} [{}] (/reset starts over)", e.code());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let total_ms = ms_since(t0);
        let first_token_ms = first_token_ms.unwrap_or(total_ms);
        if json {
            let Value::Object(mut members) = done.to_value() else {
                unreachable!("an envelope is an object")
            };
            members.push((
                "tokens".into(),
                Value::Array(done.tokens.iter().map(|&t| Value::Int(t.to_string())).collect()),
            ));
            let timings = [("first_token_ms", first_token_ms), ("total_ms", total_ms)];
            members.push((
                "timings".into(),
                Value::Object(timings.map(|(k, v)| (k.into(), Value::Float(v))).into()),
            ));
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
        if conversation.sent() == UNRESET_TURNS + 1 {
            eprintln!(
                "needle chat: {UNRESET_TURNS} queries without /reset: every turn stays in the conversation, so unrelated \
                 queries lose accuracy and confidence; /reset between independent queries"
            );
        }
    }
    Ok(())
}

fn io(e: std::io::Error) -> Failure {
    Failure::Io("stdout".into(), e)
}
