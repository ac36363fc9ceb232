//! Helpers the integration tests share: fixture discovery, case.json access, recorded logits
//! and the deviation metric the parity bars are stated in.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use needle_web::json::{self, Value};
use needle_web::kernels::f16;

/// Exact numerics must match each reference row to this fraction of its largest logit. Measured
/// worst (the native kernels are bit-identical to the scalar ones on every x86 variant): rows
/// 4.9e-6 on Needle 2 (`system_eos`, window 256), 1.5e-6 on Needle 3; probe heads 1.4e-6; the
/// GPU path 1.3e-6 (src/gpu/README.md). Logits scaled by 1 + 2e-5 (the final norm's output) fail it.
pub const F32_BAR: f64 = 1e-5;

/// The committed fixture tree, tests/fixtures.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The case directories (those holding a case.json) under `root`, sorted; there must be some.
pub fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no cases under {}", root.display());
    dirs
}

pub fn load_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    json::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One fixture: the container upstream exported and what upstream computed from it.
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub bytes: Vec<u8>,
    pub json: Value,
}

impl Case {
    pub fn load(dir: PathBuf) -> Case {
        Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            bytes: fs::read(dir.join("model.cact"))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display())),
            json: load_json(&dir.join("case.json")),
            dir,
        }
    }
}

/// The cases of one generation ("v2", "v3"): tests/fixtures/<generation>, or the tree that
/// `V2_FIXTURES` / `V3_FIXTURES` names (e.g. one being regenerated).
pub fn cases(generation: &str) -> Vec<Case> {
    let root = std::env::var(format!("{}_FIXTURES", generation.to_uppercase()))
        .map(PathBuf::from)
        .unwrap_or_else(|_| fixtures().join(generation));
    case_dirs(&root).into_iter().map(Case::load).collect()
}

pub fn get<'v>(v: &'v Value, key: &str) -> &'v Value {
    v.get(key).unwrap_or_else(|| panic!("case.json lacks {key}"))
}

pub fn num(v: &Value) -> f64 {
    match v {
        Value::Int(s) => s.parse().unwrap(),
        Value::Float(x) => *x,
        other => panic!("not a number: {other:?}"),
    }
}

pub fn nums(v: &Value) -> Vec<f64> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v:?}")).iter().map(num).collect()
}

pub fn floats(v: &Value) -> Vec<f32> {
    nums(v).into_iter().map(|x| x as f32).collect()
}

/// A list of token ids (JSON integers).
pub fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an id list: {v:?}"))
        .iter()
        .map(|x| match x {
            Value::Int(digits) => digits.parse().expect("id"),
            other => panic!("not an id: {other:?}"),
        })
        .collect()
}

pub fn argmax(row: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in row.iter().enumerate() {
        if x > row[best] {
            best = i;
        }
    }
    best as u32
}

/// max |ours - ref| / max |ref| of one row.
pub fn deviation(ours: &[f32], reference: &[f32]) -> f64 {
    let scale = reference.iter().fold(0f64, |m, &x| m.max(f64::from(x).abs()));
    let worst = ours
        .iter()
        .zip(reference)
        .fold(0f64, |m, (&a, &b)| m.max((f64::from(a) - f64::from(b)).abs()));
    worst / scale.max(1e-30)
}

/// The logits rows a mode records, widened to f32, with their width and storage quantum.
pub fn reference_rows(case: &Case, mode: &Value) -> (Vec<f32>, usize, f64) {
    let logits = get(mode, "logits");
    let raw = fs::read(case.dir.join(get(logits, "file").as_str().unwrap())).unwrap();
    let cols = num(get(logits, "cols")) as usize;
    let (rows, quantum) = match get(logits, "dtype").as_str().unwrap() {
        "f32" => (
            raw.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect::<Vec<_>>(),
            0.0,
        ),
        // FP16 storage moves each value by up to 2^-11 of itself.
        "f16" => (
            raw.chunks_exact(2).map(|c| f16::to_f32(u16::from_le_bytes([c[0], c[1]]))).collect(),
            2f64.powi(-11),
        ),
        other => panic!("logits dtype {other}"),
    };
    assert_eq!(rows.len(), num(get(logits, "rows")) as usize * cols);
    (rows, cols, quantum)
}

/// How a mode's rows compared with its record.
pub struct ModeResult {
    pub worst: f64,
    pub bar: f64,
    pub tokens_checked: usize,
}

/// Checks a teacher-forced run of a recorded mode: `rows` (width `v`, one per prompt and
/// greedy token) against the recorded rows, the last row against its full-precision copy, and
/// `ours` (our argmax before each greedy step) against the recorded greedy tokens. Exact
/// modes must match to `F32_BAR` with every token identical; the others within the tolerance
/// the generator measured (plus the storage quantum for stored rows), with tokens identical
/// over the steps whose margin clearly exceeds that noise.
pub fn check_rows(
    case: &Case,
    mode_name: &str,
    mode: &Value,
    exact: bool,
    rows: &[f32],
    v: usize,
    ours: &[u32],
) -> ModeResult {
    let greedy = ids(get(mode, "greedy"));
    let (reference, cols, quantum) = reference_rows(case, mode);
    assert_eq!(cols, v, "{}: logits width", case.name);
    assert_eq!(rows.len(), reference.len(), "{} {mode_name}: rows", case.name);

    let (bar, last_bar, exact_steps) = if exact {
        (F32_BAR, F32_BAR, greedy.len())
    } else {
        let tolerance = num(get(mode, "tolerance"));
        (tolerance + quantum, tolerance, num(get(mode, "robust_prefix")) as usize)
    };
    assert_eq!(
        ours[..exact_steps],
        greedy[..exact_steps],
        "{} {mode_name}: greedy tokens",
        case.name
    );

    let mut worst = 0f64;
    for (i, (a, r)) in rows.chunks_exact(v).zip(reference.chunks_exact(v)).enumerate() {
        let dev = deviation(a, r);
        assert!(dev <= bar, "{} {mode_name}: row {i} deviates by {dev:.3e} > {bar:.3e}", case.name);
        worst = worst.max(dev);
    }
    // The last row is also recorded in full f32 precision.
    let last = floats(get(mode, "last_row"));
    let dev = deviation(&rows[rows.len() - v..], &last);
    assert!(
        dev <= last_bar,
        "{} {mode_name}: last row deviates by {dev:.3e} > {last_bar:.3e}",
        case.name
    );
    ModeResult { worst: worst.max(dev), bar, tokens_checked: exact_steps }
}
