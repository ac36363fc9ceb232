// TEMPORARY (v2-model helper): bit-exact snapshot of the v3 forward across a refactor. Deleted after.
use needle_web::container::V3Container;
use needle_web::v3::{HeadKind, KvPrecision, Model, Numerics, Options};
use std::fmt::Write;

#[test]
fn snapshot() {
    let root = std::path::PathBuf::from(std::env::var("V3_FIXTURES").unwrap());
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("model.cact").exists()).collect();
    dirs.sort();
    let mut out = String::new();
    for dir in dirs {
        let bytes = std::fs::read(dir.join("model.cact")).unwrap();
        let c = V3Container::parse(&bytes).unwrap();
        let m = Model::new(&c).unwrap();
        let v = m.logits_len();
        let toks: Vec<u32> = (0..150u32).map(|i| (i * 7919 + 13) % (v as u32).min(m.geometry().vocab as u32)).map(|t| if t == 0 { 1 } else { t }).collect();
        for (kv, num) in [(KvPrecision::F32, Numerics::Exact), (KvPrecision::Int8, Numerics::Exact), (KvPrecision::Int8, Numerics::Deploy)] {
            for depth in [m.geometry().num_layers, 2] {
                let o = Options { kv, numerics: num, depth, track_heads: true, prefill_chunk: 7, ..m.default_options() };
                let mut s = m.new_state(&o).unwrap();
                let mut rows = vec![0f32; toks.len() * v];
                m.prefill_rows(&mut s, &toks, &mut rows).unwrap();
                let mut h: u64 = 1469598103934665603;
                for x in &rows { h = (h ^ x.to_bits() as u64).wrapping_mul(1099511628211); }
                for k in [HeadKind::Embedding, HeadKind::Confidence, HeadKind::Router] {
                    if let Ok(o) = m.head(&s, k) { for x in o { h = (h ^ x.to_bits() as u64).wrapping_mul(1099511628211); } }
                }
                writeln!(out, "{} {:?} {:?} {} {:016x}", dir.display(), kv, num, depth, h).unwrap();
            }
        }
    }
    let path = std::env::var("SNAP").unwrap();
    if let Ok(prev) = std::fs::read_to_string(&path) { assert_eq!(prev, out); eprintln!("snapshot identical"); } else { std::fs::write(&path, &out).unwrap(); eprintln!("snapshot written"); }
    eprint!("{out}");
}
