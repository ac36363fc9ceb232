//! `needle snapshot` and `needle run --snapshot` on the embedded default model: a preset's
//! snapshot gives the run without it (tokens, confidence) with its prefix reused, and a corrupt
//! snapshot fails with the typed code and exit status 1.
#![cfg(feature = "cli")]

use std::process::{Command, Output};

use needle_web::json::{self, Value};

fn needle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("run needle")
}

fn run(extra: &[&str]) -> Value {
    let mut args =
        vec!["run", "--preset", "smart_home", "--query", "Dim the study to 40 percent", "--json"];
    args.extend_from_slice(extra);
    let out = needle(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json::parse(&String::from_utf8(out.stdout).unwrap()).unwrap()
}

#[test]
fn a_preset_snapshot_gives_the_fresh_runs_answer_and_a_corrupt_one_is_refused() {
    let file = std::env::temp_dir().join(format!("needle-cli-{}.snap", std::process::id()));
    let path = file.to_str().unwrap();
    let out = needle(&["snapshot", "--preset", "smart_home", "--out", path]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fresh = run(&[]);
    let loaded = run(&["--snapshot", path]);
    let n = loaded.get("snapshot_tokens").unwrap().to_json();
    assert_eq!(loaded.get("usage").unwrap().get("cached_tokens").unwrap().to_json(), n);
    for key in ["tokens", "confidence", "prompt_ids"] {
        assert_eq!(loaded.get(key).unwrap().to_json(), fresh.get(key).unwrap().to_json(), "{key}");
    }
    let mut bytes = std::fs::read(&file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let out = needle(&["run", "--preset", "smart_home", "--query", "hi", "--snapshot", path]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("[bad_snapshot]"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&file).ok();
}
