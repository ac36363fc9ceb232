//! The `threads` feature changes which thread computes what, never the result: every fixture
//! (both generations, every KV precision and numerics) gives the same bits with all work on one
//! thread as with every split the kernels' seam offers taken, into as many chunks as a pool of
//! 2, 3, 4 or 7 threads allows (odd counts make chunks uneven): the matrix products (several matrices of one
//! input as one run of rows), attention by heads, and a prefill chunk's per-token stages (input
//! rotations, the mHC coefficients, the MLP and the lane write-back) by tokens. The parity suites hold the one-thread
//! results to upstream's; this holds the split ones to those.
//!
//! `cargo test --release --features cli,threads --test threads`
#![cfg(feature = "threads")]

mod common;

use needle_web::kernels::parallel;
use needle_web::session::{Engine, KvPrecision, LoadOptions, Numerics, Request};

/// Logits of the case's prompt (batched prefill) and a greedy completion (stepped decode).
fn run(bytes: &[u8], options: &LoadOptions, prompt: &[u32]) -> (Vec<f32>, Vec<u32>) {
    let mut engine = Engine::load(bytes, options).unwrap();
    let rows = engine.logits_for(prompt).unwrap();
    let mut req = Request::new("Turn on the kitchen lights", "[]");
    req.max_tokens = 12;
    let done = engine.generate(&req, |_| true).unwrap();
    (rows, done.tokens)
}

#[test]
fn split_work_gives_the_bits_of_one_thread_on_every_fixture() {
    // Even and odd pool sizes, one that splits every head count unevenly (7).
    let pools: Vec<_> = [2, 3, 4, 7]
        .map(|n| (n, rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap()))
        .into();
    let modes = [
        (KvPrecision::F32, Numerics::Exact),
        (KvPrecision::Int8, Numerics::Exact),
        (KvPrecision::Int8, Numerics::Deploy),
    ];
    let mut compared = 0;
    for case in common::cases("v3").into_iter().chain(common::cases("v2")) {
        let prompt = common::ids(common::get(&case.json, "prompt_ids"));
        for (kv, numerics) in modes {
            let options = LoadOptions { kv: Some(kv), numerics, ..LoadOptions::default() };
            parallel::set_min_chunk_work(usize::MAX);
            let serial = run(&case.bytes, &options, &prompt);
            assert!(!serial.1.is_empty(), "{} {kv:?} {numerics:?}: nothing decoded", case.name);
            for (threads, pool) in &pools {
                parallel::set_min_chunk_work(1);
                let split = pool.install(|| run(&case.bytes, &options, &prompt));
                parallel::set_min_chunk_work(parallel::MIN_CHUNK_WORK);
                let what = format!("{} {kv:?} {numerics:?} {threads} threads", case.name);
                assert!(
                    serial.0.iter().zip(&split.0).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{what}: prefill logits differ"
                );
                assert_eq!(serial.0.len(), split.0.len(), "{what}");
                assert_eq!(serial.1, split.1, "{what}: decoded tokens differ");
                compared += 1;
            }
        }
    }
    assert!(compared >= 24, "only {compared} fixture runs compared");
}
