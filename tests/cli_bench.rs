//! `needle bench`'s record contract, which tools/bench/run.mjs reads (no timing is asserted):
//! `--ids` gives upstream's prompt ids, and a run prints load, one record per request in order
//! with the counts it ran, and memory.
#![cfg(feature = "cli")]

mod common;

use std::process::Command;

use common::{case_dirs, fixtures, ids, load_json};
use needle_web::json::{self, Value};

fn records(args: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("run needle");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::str::from_utf8(&out.stdout).unwrap().lines().map(|l| json::parse(l).unwrap()).collect()
}

fn int(v: &Value, key: &str) -> usize {
    v.get(key).unwrap_or_else(|| panic!("no {key} in {}", v.to_json())).to_json().parse().unwrap()
}

#[test]
fn bench_prints_the_prompt_ids_and_one_record_per_request() {
    let dir = case_dirs(&fixtures().join("v3")).remove(0);
    let case = load_json(&dir.join("case.json"));
    let prompt = case.get("prompt").unwrap();
    let request = |name: &str, max_tokens: usize| {
        let mut members = vec![
            ("name".to_string(), Value::String(name.into())),
            ("query".to_string(), prompt.get("query").unwrap().clone()),
            ("tools".to_string(), prompt.get("tools_json").unwrap().clone()),
            ("max_tokens".to_string(), Value::Int(max_tokens.to_string())),
        ];
        if let Some(system) = prompt.get("system") {
            members.push(("system".to_string(), system.clone()));
        }
        Value::Object(members)
    };
    let file = std::env::temp_dir().join(format!("needle-cli-bench-{}.json", std::process::id()));
    std::fs::write(&file, Value::Array(vec![request("first", 3), request("again", 1)]).to_json())
        .unwrap();
    let model = dir.join("model.cact");
    let (model, file_arg) = (model.to_str().unwrap(), file.to_str().unwrap());

    let listed = records(&["bench", "--model", model, "--requests", file_arg, "--ids"]);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].get("name").unwrap().as_str(), Some("first"));
    assert_eq!(ids(listed[0].get("ids").unwrap()), ids(case.get("prompt_ids").unwrap()));

    let run = records(&["bench", "--model", model, "--requests", file_arg, "--kv", "f32"]);
    let kinds: Vec<_> = run.iter().map(|r| r.get("kind").unwrap().as_str().unwrap()).collect();
    assert_eq!(kinds, ["load", "request", "request", "memory"]);
    // On the CPU: no device memory and no GPU kernel variant.
    assert_eq!(int(&run[0], "device_bytes"), 0);
    assert_eq!(run[0].get("kernels"), Some(&Value::Null));
    let prompt_len = ids(case.get("prompt_ids").unwrap()).len();
    for (record, name, max_tokens) in [(&run[1], "first", 3), (&run[2], "again", 1)] {
        assert_eq!(record.get("name").unwrap().as_str(), Some(name));
        assert_eq!(int(record, "prompt_tokens"), prompt_len);
        // The first token comes from the prefill; each later one is a decode step.
        let stopped_early = record.get("stop").unwrap().as_str() != Some("max_tokens");
        assert!(int(record, "decoded") == max_tokens - 1 || stopped_early, "{}", record.to_json());
        assert!(int(record, "kv_bytes") > 0);
    }
    assert!(int(&run[3], "peak_bytes") > std::fs::metadata(model).unwrap().len() as usize);
    let _ = std::fs::remove_file(file);
}
