//! `needle extract`: the schema as the only tool, constrained decoding, the call's arguments (or
//! `null`) on stdout; strict grounding refuses values the text does not write (`[ungrounded]`,
//! exit 1). Runs the embedded default model on a tool of its data-capture environment.
#![cfg(feature = "cli")]

use std::path::PathBuf;
use std::process::{Command, Output};

use needle_web::json::{self, Value};

fn needle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("run needle")
}

/// A tool of the data_capture preset, written to a temporary schema file.
fn schema(name: &str) -> PathBuf {
    let env = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/www/presets/data_capture.json"
    ))
    .unwrap();
    let env = json::parse(&env).unwrap();
    let tool = env
        .get("tools")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .unwrap();
    let path =
        std::env::temp_dir().join(format!("needle-extract-{name}-{}.json", std::process::id()));
    std::fs::write(&path, tool.to_json()).unwrap();
    path
}

fn extract(schema: &std::path::Path, text: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "extract",
        "--schema",
        schema.to_str().unwrap(),
        "--text",
        text,
        "--date",
        "2026-12-02 Wed 06:45",
    ];
    args.extend(extra);
    needle(&args)
}

#[test]
fn extract_prints_the_arguments_and_refuses_ungrounded_values() {
    let water = schema("log_water_intake");
    let out = extract(&water, "I drank 500 ml of water", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        json::parse(std::str::from_utf8(&out.stdout).unwrap().trim()).unwrap().to_json(),
        r#"{"amount_ml":500}"#
    );

    // The amount in words: the millilitres the model writes are not in the input.
    let out = extract(&water, "I drank half a liter of water", &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("log_water_intake.amount_ml") && stderr.contains("[ungrounded]"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // Not strict: the arguments as generated.
    let out = extract(&water, "I drank half a liter of water", &["--no-strict"]);
    assert!(out.status.success());
    assert!(json::parse(std::str::from_utf8(&out.stdout).unwrap().trim())
        .unwrap()
        .get("amount_ml")
        .is_some());
    let _ = std::fs::remove_file(water);
}

#[test]
fn extract_fails_cleanly_on_a_bad_schema() {
    let path = std::env::temp_dir().join(format!("needle-extract-bad-{}.json", std::process::id()));
    std::fs::write(&path, "{not json").unwrap();
    let out = needle(&["extract", "--schema", path.to_str().unwrap(), "--text", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[bad_json]"));
    let out = needle(&["extract", "--text", "x"]);
    assert_eq!(out.status.code(), Some(2), "--schema is required");
    let _ = std::fs::remove_file(path);
}
