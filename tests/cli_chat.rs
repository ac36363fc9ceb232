//! `needle chat`: turns from stdin, one per line, each answered with the conversation so far in
//! the prompt; `/reset` starts over; a turn that does not fit is a typed error and the
//! conversation goes on. Runs the embedded default model on a built-in preset.
#![cfg(feature = "cli")]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use needle_web::json::{self, Value};

fn needle(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run needle");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn usage(v: &Value, key: &str) -> usize {
    v.get("usage").unwrap().get(key).unwrap().to_json().parse().unwrap()
}

#[test]
fn chat_answers_each_line_with_the_history_and_reset_starts_over() {
    let lines = "turn on the kitchen lights\n\nclose the bedroom blinds\n/reset\nset the thermostat to 21 degrees\n";
    let out = needle(&["chat", "--preset", "smart_home", "--max-tokens", "64", "--json"], lines);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answers: Vec<Value> = std::str::from_utf8(&out.stdout)
        .unwrap()
        .lines()
        .map(|l| json::parse(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3, "one answer per non-empty turn");
    let (first, second, third) = (&answers[0], &answers[1], &answers[2]);
    // The second prompt holds the first exchange, and the engine reused it.
    assert!(
        usage(second, "prompt_tokens")
            > usage(first, "prompt_tokens") + usage(first, "completion_tokens")
    );
    assert!(usage(second, "cached_tokens") >= usage(first, "prompt_tokens"));
    // After /reset the prompt is the single-turn one: what `needle run` gives for the query.
    let run = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args([
            "run",
            "--preset",
            "smart_home",
            "--max-tokens",
            "64",
            "--json",
            "--query",
            "set the thermostat to 21 degrees",
        ])
        .output()
        .unwrap();
    let alone = json::parse(std::str::from_utf8(&run.stdout).unwrap().trim()).unwrap();
    assert_eq!(usage(third, "prompt_tokens"), usage(&alone, "prompt_tokens"));
    assert!(
        usage(third, "cached_tokens") > 0,
        "the system prompt and tools stay cached across /reset"
    );
    for key in ["function_calls", "text", "validation", "confidence"] {
        assert_eq!(third.get(key), alone.get(key), "{key}");
    }
}

#[test]
fn a_turn_past_the_context_is_context_full_and_the_chat_goes_on() {
    let long = "please ".repeat(400);
    let lines = format!("turn on the kitchen lights\n{long}\nclose the bedroom blinds\n");
    let out = needle(
        &["chat", "--preset", "smart_home", "--max-context", "400", "--max-tokens", "32", "--json"],
        &lines,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[context_full]"), "{stderr}");
    assert_eq!(
        std::str::from_utf8(&out.stdout).unwrap().lines().count(),
        2,
        "the turns that fit are answered"
    );
}
