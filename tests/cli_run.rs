//! The CLI contract other tools rely on (`needle run --json`, `needle logits`, `needle tokenize`,
//! `needle detokenize`), on one committed fixture of each generation: the same prompt ids,
//! greedy tokens and logits as upstream, and typed failures with exit status 1.
#![cfg(feature = "cli")]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{case_dirs, fixtures, ids, load_json};
use needle_web::json::{self, Value};

fn needle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("run needle")
}

/// The first committed fixture of a generation and its case.json.
fn fixture(generation: &str) -> (PathBuf, Value) {
    let dir = case_dirs(&fixtures().join(generation)).remove(0);
    let case = load_json(&dir.join("case.json"));
    (dir, case)
}
fn joined(ids: &[u32]) -> String {
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

#[test]
fn run_json_gives_upstreams_prompt_ids_and_greedy_tokens_for_both_generations() {
    for generation in ["v3", "v2"] {
        let (dir, case) = fixture(generation);
        let prompt = case.get("prompt").unwrap();
        let tools = std::env::temp_dir()
            .join(format!("needle-cli-tools-{generation}-{}.json", std::process::id()));
        std::fs::write(&tools, prompt.get("tools_json").unwrap().as_str().unwrap()).unwrap();
        let greedy = ids(case.get("modes").unwrap().get("f32").unwrap().get("greedy").unwrap());
        let model = dir.join("model.cact");
        let max_tokens = greedy.len().to_string();
        let mut args = vec![
            "run",
            "--model",
            model.to_str().unwrap(),
            "--query",
            prompt.get("query").unwrap().as_str().unwrap(),
            "--tools",
            tools.to_str().unwrap(),
            "--kv",
            "f32",
            "--max-tokens",
            &max_tokens,
            "--json",
        ];
        if let Some(system) = prompt.get("system").and_then(Value::as_str) {
            args.extend(["--system", system]);
        }
        let out = needle(&args);
        assert!(out.status.success(), "{generation}: {}", String::from_utf8_lossy(&out.stderr));
        let result = json::parse(std::str::from_utf8(&out.stdout).unwrap().trim()).unwrap();
        assert_eq!(
            ids(result.get("prompt_ids").unwrap()),
            ids(case.get("prompt_ids").unwrap()),
            "{generation}"
        );
        assert_eq!(ids(result.get("tokens").unwrap()), greedy, "{generation}");
        for key in ["text", "function_calls", "confidence", "stop_reason", "timings"] {
            assert!(result.get(key).is_some(), "{generation}: run --json lacks {key}");
        }
        let _ = std::fs::remove_file(tools);
    }
}

#[test]
fn logits_out_writes_every_row_as_upstream_computes_it() {
    for generation in ["v3", "v2"] {
        let (dir, case) = fixture(generation);
        let prompt_ids = ids(case.get("prompt_ids").unwrap());
        let logits = case.get("modes").unwrap().get("f32").unwrap().get("logits").unwrap();
        let cols: usize = logits.get("cols").unwrap().to_json().parse().unwrap();
        let reference =
            std::fs::read(dir.join(logits.get("file").unwrap().as_str().unwrap())).unwrap();
        let reference: Vec<f32> =
            reference.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        let out_file = std::env::temp_dir()
            .join(format!("needle-cli-logits-{generation}-{}.f32", std::process::id()));
        let model = dir.join("model.cact");
        let out = needle(&[
            "logits",
            "--model",
            model.to_str().unwrap(),
            "--tokens",
            &joined(&prompt_ids),
            "--kv",
            "f32",
            "--out",
            out_file.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{generation}: {}", String::from_utf8_lossy(&out.stderr));
        let ours: Vec<f32> = std::fs::read(&out_file)
            .unwrap()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(ours.len(), prompt_ids.len() * cols, "{generation}: one row per prompt token");
        for (row, (a, b)) in ours.chunks(cols).zip(reference.chunks(cols)).enumerate() {
            let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
            let worst = a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
            assert!(
                f64::from(worst) <= common::F32_BAR * f64::from(scale),
                "{generation}: row {row} off by {worst} (max |ref| {scale})"
            );
        }
        let _ = std::fs::remove_file(out_file);
    }
}

#[test]
fn tokenize_and_detokenize_round_trip_through_the_containers_tokenizer() {
    for generation in ["v3", "v2"] {
        let (dir, _) = fixture(generation);
        let model = dir.join("model.cact");
        let text = "Turn on the lights, s'il vous plaît — 明天 10:30?";
        let out = needle(&["tokenize", "--model", model.to_str().unwrap(), "--text", text]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let list = ids(&json::parse(std::str::from_utf8(&out.stdout).unwrap().trim()).unwrap());
        assert!(!list.is_empty());
        let out =
            needle(&["detokenize", "--model", model.to_str().unwrap(), "--ids", &joined(&list)]);
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim_end_matches('\n'),
            text,
            "{generation}"
        );
    }
}

#[test]
fn bad_requests_fail_with_a_typed_message_and_status_1() {
    let (dir, _) = fixture("v3");
    let model = dir.join("model.cact");
    let model = model.to_str().unwrap();
    let bad_tools =
        std::env::temp_dir().join(format!("needle-cli-bad-{}.json", std::process::id()));
    std::fs::write(&bad_tools, "[{\"name\": ").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["logits", "--model", model, "--tokens", "2,999999"], "token_out_of_vocab"),
        (
            &["run", "--model", model, "--query", "hi", "--tools", bad_tools.to_str().unwrap()],
            "bad_json",
        ),
        (&["run", "--model", model, "--query", "hi", "--max-context", "2"], "context_full"),
    ];
    for (args, code) in cases {
        let out = needle(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("[{code}]")), "{args:?}: {stderr}");
    }
    let out = needle(&["run", "--model", model]);
    assert_eq!(out.status.code(), Some(2), "a missing --query is a usage error");
    let _ = std::fs::remove_file(bad_tools);
}

/// Without `--model` the CLI runs the embedded default model, and `--preset` is exactly the
/// preset file's tools and system prompt: the same prompt and tokens as passing them by hand.
#[test]
fn embedded_model_and_preset_equal_the_files_they_come_from() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = root.join("www/models/default.cact");
    let preset = load_json(&root.join("www/presets/smart_home.json"));
    let tools = std::env::temp_dir().join(format!("needle-cli-preset-{}.json", std::process::id()));
    std::fs::write(&tools, preset.get("tools").unwrap().to_json()).unwrap();
    let query = "Turn on the kitchen lights";
    let by_hand = needle(&[
        "run",
        "--model",
        model.to_str().unwrap(),
        "--query",
        query,
        "--tools",
        tools.to_str().unwrap(),
        "--system",
        preset.get("system").unwrap().as_str().unwrap(),
        "--max-tokens",
        "48",
        "--json",
    ]);
    let built_in = needle(&[
        "run",
        "--preset",
        "smart_home",
        "--query",
        query,
        "--max-tokens",
        "48",
        "--json",
    ]);
    let _ = std::fs::remove_file(&tools);
    let parse = |out: &Output| {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        json::parse(std::str::from_utf8(&out.stdout).unwrap().trim()).unwrap()
    };
    let (by_hand, built_in) = (parse(&by_hand), parse(&built_in));
    for key in ["prompt_ids", "tokens"] {
        assert_eq!(ids(built_in.get(key).unwrap()), ids(by_hand.get(key).unwrap()), "{key}");
    }
    assert!(!ids(built_in.get("tokens").unwrap()).is_empty());

    let out = needle(&["inspect", "--json"]);
    assert!(out.status.success());
    let info = json::parse(std::str::from_utf8(&out.stdout).unwrap().trim()).unwrap();
    let file_bytes = info.get("file_bytes").and_then(|v| match v {
        Value::Int(s) => s.parse::<u64>().ok(),
        _ => None,
    });
    assert_eq!(
        file_bytes,
        Some(std::fs::metadata(&model).unwrap().len()),
        "inspect reads the embedded model"
    );
}

#[test]
fn preset_misuse_is_a_usage_error() {
    for args in [
        &["run", "--preset", "no_such_environment", "--query", "hi"][..],
        &["run", "--preset", "smart_home", "--tools", "t.json", "--query", "hi"][..],
    ] {
        let out = needle(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("preset"), "{args:?}");
    }
}
