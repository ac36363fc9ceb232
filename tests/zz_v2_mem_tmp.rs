// TEMPORARY (v2-model helper): memory and speed at the shipped v2 geometry. Deleted after.
use needle_web::container::V2Container;
use needle_web::v2::{KvPrecision, Model, Numerics, Options};
use std::time::Instant;

#[test]
fn shipped() {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/needle2-shipped-w4.cact")).unwrap();
    let c = V2Container::parse(&bytes).unwrap();
    let m = Model::new(&c).unwrap();
    eprintln!("geometry {:?}", m.geometry());
    for (kv, max_tokens, window, track) in [
        (KvPrecision::F32, 2048, 480, false),
        (KvPrecision::F32, 2048, 480, true),
        (KvPrecision::Int8, 2048, 480, true),
        (KvPrecision::F32, 512, 480, true),
        (KvPrecision::Int8, 512, 480, true),
        (KvPrecision::F32, 2048, 0, true),
        (KvPrecision::Int8, 2048, 0, true),
        (KvPrecision::Int8, 256, 0, true),
    ] {
        let o = Options { kv, max_tokens, window, track_heads: track, ..m.default_options() };
        let s = m.new_state(&o).unwrap();
        eprintln!("{kv:?} max_tokens {max_tokens} window {window} heads {track}: kv {} B, total state {} B ({:.2} MB), pools {} B", s.kv_bytes(), s.bytes(), s.bytes() as f64 / 1e6, s.head_pool_bytes());
    }
    let o = Options { track_heads: true, ..m.default_options() };
    let mut s = m.new_state(&o).unwrap();
    let prompt: Vec<u32> = (0..128u32).map(|i| 20 + (i * 37) % 8000).collect();
    let mut row = vec![0f32; m.logits_len()];
    let t = Instant::now();
    m.prefill(&mut s, &prompt, &mut row).unwrap();
    let pf = t.elapsed().as_secs_f64() * 1e3 / 128.0;
    let t = Instant::now();
    for i in 0..32 { m.step(&mut s, 30 + i, &mut row).unwrap(); }
    let dc = t.elapsed().as_secs_f64() * 1e3 / 32.0;
    eprintln!("prefill {pf:.1} ms/token, decode {dc:.1} ms/token");
    let _ = Numerics::Exact;
}

#[test]
fn retrieval_matches_upstream_script() {
    use needle_web::json::{self, Value};
    let r = json::parse(&std::fs::read_to_string("/tmp/v2model/retrieval.json").unwrap()).unwrap();
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v2/mixed_window/model.cact")).unwrap();
    let c = V2Container::parse(&bytes).unwrap();
    let m = Model::new(&c).unwrap();
    let tok = needle_web::tokenizer::Tokenizer::from_blob(c.tokenizer).unwrap();
    let tools: Vec<&str> = r.get("tools").unwrap().as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let mut s = m.new_state(&Options { window: 0, max_tokens: 128, track_heads: true, ..m.default_options() }).unwrap();
    let got = m.retrieve_tools(&mut s, &tok, r.get("query").unwrap().as_str().unwrap(), &tools, 5).unwrap();
    eprintln!("ours {:?}", got);
    let num = |v: &Value| match v { Value::Int(s) => s.parse::<f64>().unwrap(), Value::Float(x) => *x, _ => panic!() };
    let want: Vec<usize> = r.get("ranking").unwrap().as_array().unwrap().iter().map(|v| num(v) as usize).collect();
    let scores: Vec<f64> = r.get("scores").unwrap().as_array().unwrap().iter().map(num).collect();
    eprintln!("upstream {want:?} {scores:?}");
    assert_eq!(got.iter().map(|r| r.index).collect::<Vec<_>>(), want);
    for (g, w) in got.iter().zip(&scores) { assert!((g.score as f64 - w).abs() < 1e-5, "{} {}", g.score, w); }
}
