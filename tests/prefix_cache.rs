//! Prefix-cached requests: an engine that runs requests one after another (reusing what its
//! state holds) gives a fresh session's logits, tokens and confidence bit for bit, in every KV
//! precision and numerics, both generations, windowed rings included (v2 `mixed_window` and
//! v3 `local_global_taps` prompts run far past their windows), and it really reuses the prefix.
mod common;

use common::{case_dirs, fixtures, Case};
use needle_web::json::Value;
use needle_web::prompt::{Role, Turn};
use needle_web::session::{
    Completion, Engine, KvPrecision, LoadOptions, Numerics, Request, StopReason,
};

const MODES: [(KvPrecision, Numerics); 4] = [
    (KvPrecision::F32, Numerics::Exact),
    (KvPrecision::Int8, Numerics::Exact),
    (KvPrecision::F32, Numerics::Deploy),
    (KvPrecision::Int8, Numerics::Deploy),
];

fn cases() -> Vec<Case> {
    ["v3", "v2"].into_iter().flat_map(|g| case_dirs(&fixtures().join(g))).map(Case::load).collect()
}

/// Starts `req`, then decodes to the end: the logits after the prompt and the completion.
fn run(engine: &mut Engine, req: &Request) -> (Vec<f32>, Completion) {
    engine.start(req).unwrap();
    let logits = engine.logits().to_vec();
    while engine.next_token().unwrap().is_some() {}
    (logits, engine.finish().unwrap())
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

fn shared(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[test]
fn cached_requests_equal_fresh_ones_bit_for_bit() {
    for case in cases() {
        let prompt = case.json.get("prompt").unwrap();
        let query = prompt.get("query").unwrap().as_str().unwrap();
        let tools = prompt.get("tools_json").unwrap().as_str().unwrap();
        let system = prompt.get("system").and_then(Value::as_str);
        for (kv, numerics) in MODES {
            let opts = LoadOptions { kv: Some(kv), numerics, ..LoadOptions::default() };
            let mut cached = Engine::load(&case.bytes, &opts).unwrap();
            let mut fresh = Engine::load(&case.bytes, &opts).unwrap();
            let label = format!("{} {kv:?} {numerics:?}", case.name);
            let mut previous: Option<Completion> = None;
            let mut answer = String::new();
            // A conversation's second turn over the first query's answer, a new query with the
            // same tools, the first query again, other tools.
            for step in 0..5 {
                let turns_storage;
                let mut req = Request::new(query, tools);
                req.system = system;
                req.max_tokens = 6;
                match step {
                    2 => req.query = "Book 2 tables for 7 people at 19:30, é ok?",
                    4 => req.tools_json = "[]",
                    1 => {
                        turns_storage = [
                            Turn { role: Role::User, text: query },
                            Turn { role: Role::Assistant, text: &answer },
                        ];
                        req.turns = &turns_storage;
                        req.query = "and tomorrow?";
                    }
                    _ => {}
                }
                let (logits, done) = run(&mut cached, &req);
                fresh.reset();
                let (want_logits, want) = run(&mut fresh, &req);
                assert_eq!(
                    want.cached_tokens, 0,
                    "{label} step {step}: a reset engine reuses nothing"
                );
                assert_eq!(done.prompt_ids, want.prompt_ids, "{label} step {step}");
                assert!(
                    bits(&logits) == bits(&want_logits),
                    "{label} step {step}: logits after the prompt differ"
                );
                assert_eq!(done.tokens, want.tokens, "{label} step {step}: tokens");
                assert_eq!(
                    done.confidence.map(f32::to_bits),
                    want.confidence.map(f32::to_bits),
                    "{label} step {step}: confidence"
                );
                if let Some(prev) = &previous {
                    // What the state held: the previous prompt and (most of) its completion.
                    // The last token runs only when the confidence head scores the exchange.
                    let fed = prev.tokens.len() - usize::from(prev.confidence.is_none());
                    let held: Vec<u32> =
                        prev.prompt_ids.iter().chain(&prev.tokens[..fed]).copied().collect();
                    let common = shared(&held, &done.prompt_ids);
                    assert!(
                        done.cached_tokens <= common.min(done.prompt_ids.len() - 1),
                        "{label} step {step}: reused past the shared prefix"
                    );
                    if common == held.len() {
                        // The rendered history re-tokenizes to the ids the state holds: it
                        // runs on from there.
                        assert_eq!(done.cached_tokens, held.len(), "{label} step {step}");
                    } else if common > 2 && step != 4 {
                        assert!(
                            done.cached_tokens > 1,
                            "{label} step {step}: nothing reused of {common} shared ids"
                        );
                    }
                }
                if step == 0 {
                    answer = done.response.text.clone();
                }
                previous = Some(done);
            }
        }
    }
}

#[test]
fn a_prompt_past_the_capacity_is_context_full_and_the_cache_recovers() {
    let case = Case::load(fixtures().join("v3/local_global_taps"));
    let prompt = case.json.get("prompt").unwrap();
    let tools = prompt.get("tools_json").unwrap().as_str().unwrap();
    let opts =
        LoadOptions { kv: Some(KvPrecision::F32), context: Some(160), ..LoadOptions::default() };
    let mut engine = Engine::load(&case.bytes, &opts).unwrap();
    let mut req = Request::new("first", tools);
    req.max_tokens = 4;
    let (_, first) = run(&mut engine, &req);
    let long = "many words ".repeat(60);
    let turns = [
        Turn { role: Role::User, text: "first" },
        Turn { role: Role::Assistant, text: &first.response.text },
    ];
    let mut too_long = Request::new(&long, tools);
    too_long.turns = &turns;
    let err = engine.start(&too_long).unwrap_err();
    assert_eq!(err.code(), "context_full", "{err}");
    let (logits, again) = run(&mut engine, &req);
    let mut fresh = Engine::load(&case.bytes, &opts).unwrap();
    let (want_logits, want) = run(&mut fresh, &req);
    assert!(again.cached_tokens > 0);
    assert!(bits(&logits) == bits(&want_logits));
    assert_eq!(again.tokens, want.tokens);
}

#[test]
fn a_prefill_in_chunks_or_aborted_midway_leaves_a_fresh_sessions_bits() {
    for case in cases() {
        let prompt = case.json.get("prompt").unwrap();
        let query = prompt.get("query").unwrap().as_str().unwrap();
        let tools = prompt.get("tools_json").unwrap().as_str().unwrap();
        let mut req = Request::new(query, tools);
        req.max_tokens = 6;
        let opts = LoadOptions::default();
        let (want_logits, want) = run(&mut Engine::load(&case.bytes, &opts).unwrap(), &req);
        let mut engine = Engine::load(&case.bytes, &opts).unwrap();
        for chunk in [1, 3, 7] {
            engine.reset();
            let n = engine.begin(&req).unwrap();
            let mut calls = 1;
            while !engine.prefill(chunk).unwrap() {
                calls += 1;
            }
            assert!(calls >= n / chunk, "{} chunk {chunk}: {calls} calls for {n} ids", case.name);
            assert!(
                bits(engine.logits()) == bits(&want_logits),
                "{} chunk {chunk}: logits",
                case.name
            );
            while engine.next_token().unwrap().is_some() {}
            assert_eq!(engine.finish().unwrap().tokens, want.tokens, "{} chunk {chunk}", case.name);
        }
        // An abort between two chunks ends the request at once; the state it leaves serves
        // the next request as a fresh one.
        let other = Request::new("Book 2 tables for 7 people at 19:30 and then some", tools);
        engine.begin(&other).unwrap();
        assert!(!engine.prefill(2).unwrap());
        engine.abort();
        assert_eq!(engine.next_token().unwrap(), None);
        let aborted = engine.finish().unwrap();
        assert_eq!(
            (aborted.stop_reason, aborted.tokens.len()),
            (StopReason::Aborted, 0),
            "{}",
            case.name
        );
        let (logits, again) = run(&mut engine, &req);
        assert!(
            bits(&logits) == bits(&want_logits),
            "{}: logits after an aborted prefill",
            case.name
        );
        assert_eq!(again.tokens, want.tokens, "{}", case.name);
    }
}
