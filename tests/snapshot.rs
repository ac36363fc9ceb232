//! Prefix snapshots: a snapshot of the system prompt and tools, loaded into a fresh engine,
//! gives a fresh prefill's logits, tokens and confidence bit for bit, in every KV precision and
//! numerics, windowed rings included (`local_global_taps`' prefix passes its window); it holds
//! only the system prompt and tools; a corrupt, truncated or mismatched snapshot is refused
//! with a typed error; Needle 2 is refused as unsupported (see `session/snapshot.rs`).
mod common;

use common::{case_dirs, fixtures, num, Case};
use needle_web::container::V3Container;
use needle_web::json::Value;
use needle_web::session::{Completion, Engine, KvPrecision, LoadOptions, Numerics, Request};

const MODES: [(KvPrecision, Numerics); 4] = [
    (KvPrecision::F32, Numerics::Exact),
    (KvPrecision::Int8, Numerics::Exact),
    (KvPrecision::F32, Numerics::Deploy),
    (KvPrecision::Int8, Numerics::Deploy),
];

fn cases() -> Vec<Case> {
    case_dirs(&fixtures().join("v3")).into_iter().map(Case::load).collect()
}

fn run(engine: &mut Engine, req: &Request) -> (Vec<f32>, Completion) {
    engine.start(req).unwrap();
    let logits = engine.logits().to_vec();
    while engine.next_token().unwrap().is_some() {}
    (logits, engine.finish().unwrap())
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// The request of a case (its system prompt and tools), with the windows its model runs.
fn request(case: &Case) -> (Request<'_>, Option<usize>) {
    let prompt = case.json.get("prompt").unwrap();
    let mut req = Request::new(
        prompt.get("query").unwrap().as_str().unwrap(),
        prompt.get("tools_json").unwrap().as_str().unwrap(),
    );
    req.system = prompt.get("system").and_then(Value::as_str);
    req.max_tokens = 6;
    let window = [("upstream_config", "sliding_window"), ("export", "kv_window")]
        .iter()
        .find_map(|(part, key)| case.json.get(part).and_then(|c| c.get(key)));
    (req, window.map(num).filter(|&w| w > 0.0).map(|w| w as usize))
}

#[test]
fn a_loaded_snapshot_gives_a_fresh_prefills_bits() {
    let mut windowed = 0;
    for case in cases() {
        let (req, window) = request(&case);
        for (kv, numerics) in MODES {
            let opts = LoadOptions { kv: Some(kv), numerics, ..LoadOptions::default() };
            let label = format!("{} {kv:?} {numerics:?}", case.name);
            let mut maker = Engine::load(&case.bytes, &opts).unwrap();
            let snapshot = match maker.save_snapshot(&req) {
                Ok(s) => s,
                Err(e) => {
                    // A prompt without a system prompt or tools has nothing to save.
                    assert!(req.system.is_none() && req.tools_json.trim() == "[]", "{label}: {e}");
                    assert_eq!(e.code(), "invalid_argument");
                    continue;
                }
            };
            let mut loaded = Engine::load(&case.bytes, &opts).unwrap();
            let n = loaded.load_snapshot(&snapshot).unwrap();
            let (logits, done) = run(&mut loaded, &req);
            let mut fresh = Engine::load(&case.bytes, &opts).unwrap();
            let (want_logits, want) = run(&mut fresh, &req);
            assert_eq!(done.cached_tokens, n, "{label}: the request runs on from the snapshot");
            assert_eq!(done.prompt_ids, want.prompt_ids, "{label}");
            assert!(bits(&logits) == bits(&want_logits), "{label}: logits after the prompt differ");
            assert_eq!(done.tokens, want.tokens, "{label}: tokens");
            assert_eq!(
                done.confidence.map(f32::to_bits),
                want.confidence.map(f32::to_bits),
                "{label}"
            );
            // The engine that made it runs on from it as well.
            let (logits, made) = run(&mut maker, &req);
            assert_eq!(made.cached_tokens, n, "{label}");
            assert!(bits(&logits) == bits(&want_logits), "{label}: the maker's logits differ");
            // A windowed ring has wrapped within the prefix.
            windowed += usize::from(window.is_some_and(|w| n > w));
        }
    }
    assert!(windowed >= MODES.len(), "a windowed fixture's prefix passes its window");
}

#[test]
fn a_snapshot_holds_only_the_system_and_tools_head() {
    for case in cases() {
        let (req, _) = request(&case);
        if req.system.is_none() && req.tools_json.trim() == "[]" {
            continue;
        }
        let opts = LoadOptions::default();
        let mut a = Request::new("Turn the lights off in the kitchen", req.tools_json);
        let mut b = Request::new("What is the weather in Paris tomorrow?", req.tools_json);
        a.system = req.system;
        b.system = req.system;
        a.max_tokens = 2;
        b.max_tokens = 2;
        // No query text reaches the bytes: two queries give the same snapshot.
        let snapshot = Engine::load(&case.bytes, &opts).unwrap().save_snapshot(&a).unwrap();
        let other = Engine::load(&case.bytes, &opts).unwrap().save_snapshot(&b).unwrap();
        assert!(snapshot == other, "{}: the query changed the snapshot", case.name);
        // Its ids end at or before where the prefix cache keeps its copy after the tools (a
        // request that shares only the system prompt and tools reuses that many), and the
        // cache keeps working as without it: after a loaded snapshot, the second request
        // reuses as much as it does after a plain first one.
        let mut plain = Engine::load(&case.bytes, &opts).unwrap();
        run(&mut plain, &a);
        let (_, second) = run(&mut plain, &b);
        let mut loaded = Engine::load(&case.bytes, &opts).unwrap();
        let n = loaded.load_snapshot(&snapshot).unwrap();
        let ids = loaded.snapshot_ids(&a).unwrap();
        assert_eq!(ids.len(), n, "{}", case.name);
        assert!(
            n <= second.cached_tokens && n + 1 >= second.cached_tokens,
            "{}: {n} ids vs the cache's {}",
            case.name,
            second.cached_tokens
        );
        assert_eq!(ids, second.prompt_ids[..n], "{}", case.name);
        let (_, first) = run(&mut loaded, &a);
        assert_eq!(first.cached_tokens, n, "{}", case.name);
        let (_, after) = run(&mut loaded, &b);
        assert_eq!(
            after.cached_tokens, second.cached_tokens,
            "{}: the cache's own copy after a snapshot",
            case.name
        );
    }
}

/// `model` with the lowest mantissa bit of its final norm's first gain flipped: a model of the
/// same geometry that loads and answers, one weight apart (a container has no checksum).
fn one_weight_different(model: &[u8]) -> Vec<u8> {
    let at = V3Container::parse(model).unwrap().final_norm.offset as usize;
    let mut tweaked = model.to_vec();
    tweaked[at] ^= 1;
    assert_ne!(
        V3Container::parse(&tweaked).unwrap().final_norm.to_f32_vec(),
        V3Container::parse(model).unwrap().final_norm.to_f32_vec()
    );
    tweaked
}

#[test]
fn a_bad_or_mismatched_snapshot_is_refused_and_the_engine_still_answers() {
    let all = cases();
    let (case, other) = (&all[0], &all[1]);
    let (req, _) = request(case);
    let opts = LoadOptions { kv: Some(KvPrecision::F32), ..LoadOptions::default() };
    let good = Engine::load(&case.bytes, &opts).unwrap().save_snapshot(&req).unwrap();
    let mut fresh = Engine::load(&case.bytes, &opts).unwrap();
    let (want_logits, want) = run(&mut fresh, &req);

    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let mut other_version = good.clone();
    other_version[8] += 1;
    let int8 = LoadOptions { kv: Some(KvPrecision::Int8), ..opts };
    let deploy = LoadOptions { numerics: Numerics::Deploy, ..opts };
    let short = LoadOptions { context: Some(100), ..opts };
    let tweaked = one_weight_different(&case.bytes);
    // (what, snapshot bytes, model bytes, engine options, the error code)
    type Refusal<'a> = (&'a str, Vec<u8>, &'a [u8], LoadOptions, &'a str);
    let refusals: [Refusal; 10] = [
        ("flipped bit", flipped, &case.bytes, opts, "bad_snapshot"),
        ("truncated", good[..good.len() - 7].to_vec(), &case.bytes, opts, "bad_snapshot"),
        ("header only", good[..100].to_vec(), &case.bytes, opts, "bad_snapshot"),
        ("not a snapshot", case.bytes[..4096].to_vec(), &case.bytes, opts, "bad_snapshot"),
        ("other version", other_version, &case.bytes, opts, "snapshot_mismatch"),
        ("other model", good.clone(), &other.bytes, opts, "snapshot_mismatch"),
        // Same geometry, options and tokenizer: only the model's SHA-256 tells them apart.
        ("one weight different", good.clone(), &tweaked, opts, "snapshot_mismatch"),
        ("int8 KV", good.clone(), &case.bytes, int8, "snapshot_mismatch"),
        ("deploy numerics", good.clone(), &case.bytes, deploy, "snapshot_mismatch"),
        ("other capacity", good.clone(), &case.bytes, short, "snapshot_mismatch"),
    ];
    for (what, bytes, model, options, code) in refusals {
        let mut engine = Engine::load(model, &options).unwrap();
        let err = engine.load_snapshot(&bytes).unwrap_err();
        assert_eq!(err.code(), code, "{what}: {err}");
        if model == &case.bytes[..] && options == opts {
            let (logits, done) = run(&mut engine, &req);
            assert_eq!(done.cached_tokens, 0, "{what}: nothing of a refused snapshot is used");
            assert!(bits(&logits) == bits(&want_logits), "{what}");
            assert_eq!(done.tokens, want.tokens, "{what}");
        }
    }
}

#[test]
fn needle_2_snapshots_are_refused_as_unsupported() {
    for case in case_dirs(&fixtures().join("v2")).into_iter().map(Case::load) {
        let (req, _) = request(&case);
        let mut engine = Engine::load(&case.bytes, &LoadOptions::default()).unwrap();
        assert_eq!(engine.save_snapshot(&req).unwrap_err().code(), "unsupported", "{}", case.name);
        let v3 = &cases()[0];
        let snapshot = Engine::load(&v3.bytes, &LoadOptions::default())
            .unwrap()
            .save_snapshot(&request(v3).0)
            .unwrap();
        assert_eq!(
            engine.load_snapshot(&snapshot).unwrap_err().code(),
            "unsupported",
            "{}",
            case.name
        );
    }
}

#[test]
fn a_snapshot_key_names_its_header_and_misses_when_anything_changes() {
    let case = cases().into_iter().find(|c| request(c).0.tools_json.trim() != "[]").unwrap();
    let (req, _) = request(&case);
    let key = |kv, system: Option<&str>| {
        let opts = LoadOptions { kv: Some(kv), ..LoadOptions::default() };
        let mut r = Request::new("", req.tools_json);
        r.system = system;
        Engine::load(&case.bytes, &opts).unwrap().snapshot_key(&r).unwrap()
    };
    let opts = LoadOptions { kv: Some(KvPrecision::Int8), ..LoadOptions::default() };
    let bytes = Engine::load(&case.bytes, &opts).unwrap().save_snapshot(&req).unwrap();
    let named: Vec<u8> = [&bytes[8..12], &bytes[44..136]].concat();
    assert_eq!(key(KvPrecision::Int8, req.system), named, "the key is the header's naming");
    assert_ne!(key(KvPrecision::F32, req.system), named, "another KV precision misses");
    assert_ne!(key(KvPrecision::Int8, Some("Another system prompt.")), named, "another prefix");
}

#[test]
fn a_snapshot_made_in_steps_is_the_one_made_at_once() {
    // Every case (windowed rings included) in every KV precision and numerics.
    for case in cases() {
        let (req, _) = request(&case);
        if req.system.is_none() && req.tools_json.trim() == "[]" {
            continue;
        }
        for (kv, numerics) in MODES {
            let label = format!("{} {kv:?} {numerics:?}", case.name);
            let opts = LoadOptions { kv: Some(kv), numerics, ..LoadOptions::default() };
            let whole = Engine::load(&case.bytes, &opts).unwrap().save_snapshot(&req).unwrap();
            let mut engine = Engine::load(&case.bytes, &opts).unwrap();
            run(&mut engine, &req); // a request before: the steps start from a fresh state
            let ids = engine.begin_snapshot(&req).unwrap();
            assert!(engine.seal_snapshot(&ids).is_err(), "{label}: sealed before its ids ran");
            let mut steps = 0;
            while !engine.snapshot_step(&ids, 7).unwrap() {
                steps += 1;
            }
            assert!(steps > 1, "{label}: {} ids ran in {steps} steps", ids.len());
            assert!(engine.seal_snapshot(&ids).unwrap() == whole, "{label}: the same bytes");
            // The engine keeps it as its prefix copy: the next request runs on from it.
            let (_, done) = run(&mut engine, &req);
            assert_eq!(done.cached_tokens, ids.len(), "{label}");
        }
    }
}
