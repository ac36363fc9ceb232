//! `needle inspect` on committed fixtures: the table names every record, `--json` is valid JSON
//! carrying the same facts, and bad invocations or inputs fail with the right exit status.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use needle_web::container;
use needle_web::json::{self, Value};

fn needle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("run needle")
}

fn first_fixture(generation: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(generation);
    let mut models: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("model.cact"))
        .filter(|p| p.exists())
        .collect();
    models.sort();
    models.into_iter().next().unwrap_or_else(|| panic!("no committed {generation} fixture"))
}

#[test]
fn inspect_lists_every_record_by_name_in_text_and_json() {
    for (generation, number) in [("v3", 3), ("v2", 2)] {
        let model = first_fixture(generation);
        let path = model.to_str().unwrap();
        let bytes = std::fs::read(&model).unwrap();
        let parsed = container::parse(&bytes).unwrap();

        let out = needle(&["inspect", "--model", path]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&format!("generation  Needle {number}")), "{text}");
        for t in parsed.tensors() {
            assert!(
                text.contains(&format!(" {}  ", t.name)) || text.contains(&format!(" {} ", t.name)),
                "{} missing",
                t.name
            );
        }

        let out = needle(&["inspect", "--json", &format!("--model={path}")]);
        assert!(out.status.success());
        let doc =
            json::parse(&String::from_utf8(out.stdout).unwrap()).expect("inspect --json is JSON");
        assert_eq!(doc.get("generation"), Some(&Value::Int(number.to_string())));
        let tensors = doc.get("tensors").and_then(Value::as_array).unwrap();
        assert_eq!(tensors.len(), parsed.tensors().len());
        for (row, t) in tensors.iter().zip(parsed.tensors()) {
            assert_eq!(row.get("name").and_then(Value::as_str), Some(t.name.to_string().as_str()));
            assert_eq!(row.get("nbytes"), Some(&Value::Int(t.view.data.len().to_string())));
        }
        let geometry = doc.get("geometry").unwrap();
        assert_eq!(
            geometry.get("num_tensors"),
            Some(&Value::Int(parsed.tensors().len().to_string()))
        );
    }
}

#[test]
fn inspect_fails_with_status_2_on_bad_usage_and_1_on_a_refused_file() {
    // A bare `inspect` reads the embedded default model (tests/cli_run.rs); a `--model` without
    // a value is a usage error.
    assert_eq!(needle(&["inspect", "--model"]).status.code(), Some(2));
    let model = first_fixture("v3");
    let path = model.to_str().unwrap();
    assert_eq!(needle(&["inspect", "--model", path, "--bogus"]).status.code(), Some(2));
    assert_eq!(needle(&["no-such-command"]).status.code(), Some(2));

    let case = model.with_file_name("case.json");
    let out = needle(&["inspect", "--model", case.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[bad_tag]"));
    assert_eq!(needle(&["inspect", "--model", "/nonexistent/model.cact"]).status.code(), Some(1));
}

#[test]
fn inspect_and_run_refuse_a_header_that_would_size_a_huge_allocation_alike() {
    // v3 max_seq_len (word 13), an n-gram order with its conv dilation (words 27, 24); v2
    // max_seq_len (word 11) with kv_window 0 (word 3).
    let cases: [(&str, &[(usize, u32)]); 3] = [
        ("v3", &[(13, u32::MAX)]),
        ("v3", &[(27, 1 << 31), (24, 1 << 31)]),
        ("v2", &[(3, 0), (11, u32::MAX)]),
    ];
    let dir = std::env::temp_dir().join(format!("needle-crafted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (generation, edits)) in cases.iter().enumerate() {
        let mut bytes = std::fs::read(first_fixture(generation)).unwrap();
        for &(word, value) in edits.iter() {
            bytes[4 * word..4 * word + 4].copy_from_slice(&value.to_le_bytes());
        }
        let path = dir.join(format!("crafted{i}.cact"));
        std::fs::write(&path, &bytes).unwrap();
        let path = path.to_str().unwrap();
        let inspect = needle(&["inspect", "--model", path]);
        let run = needle(&["run", "--model", path, "--query", "hi", "--max-tokens", "1"]);
        for out in [&inspect, &run] {
            assert_eq!(
                out.status.code(),
                Some(1),
                "{generation} {edits:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let reason = |out: &Output| {
            String::from_utf8_lossy(&out.stderr).split_once(": ").map(|(_, r)| r.to_string())
        };
        assert_eq!(reason(&inspect), reason(&run), "{generation} {edits:?}");
        assert!(reason(&run).unwrap().contains("[bad_header]"), "{generation} {edits:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
