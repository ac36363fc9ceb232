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
