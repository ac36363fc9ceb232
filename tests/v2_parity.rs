//! The Needle 2 forward pass against upstream's own outputs (tests/fixtures/v2/<case>/: a
//! container written by cactus-needle 2.0.15's exporter, and case.json with the logits, greedy
//! tokens and probe-head outputs upstream's model computes from that container; see
//! tools/reference/v2_fixtures.py).
//!
//! Modes: `f32` (exact numerics under the header's attention window), `f32_full` (exact, full
//! causal: what upstream's `generate_cached` runs; recorded when the sequence outgrows the
//! window) and `deploy` (upstream's A8 deployment numerics). f32 must match to 1e-4 of each
//! row's largest logit with every greedy token identical; deploy within the tolerance the
//! generator measured by moving the weights one part in a million, with tokens identical over
//! the greedy steps whose margin clearly exceeds that noise.
//!
//! `V2_FIXTURES=<dir>` points the tests at another fixture tree (e.g. one being regenerated).
mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use common::{argmax, check_rows, deviation, floats, get, ids, num, Case, ModeResult, F32_BAR};
use counting_alloc::allocations;
use needle_web::container::{V2Container, V3Container};
use needle_web::json::Value;
use needle_web::v2::{HeadKind, KvPrecision, Model, Numerics, Options, State};
use needle_web::Error;

fn cases() -> Vec<Case> {
    common::cases("v2")
}

/// Numerics, KV precision and window of a recorded mode (the KV cache stays f32, as
/// upstream's, except in kv8: the fixture script's int8 KV reference).
fn mode_options(model: &Model<'_>, mode_name: &str, mode: &Value) -> Options {
    let (numerics, kv) = match mode_name {
        "f32" | "f32_full" => (Numerics::Exact, KvPrecision::F32),
        "kv8" => (Numerics::Exact, KvPrecision::Int8),
        "deploy" => (Numerics::Deploy, KvPrecision::F32),
        other => panic!("unknown mode {other}"),
    };
    let window = num(get(mode, "window")) as usize;
    Options { numerics, kv, window, ..model.default_options() }
}

fn modes(case: &Case) -> Vec<(String, &Value)> {
    match get(&case.json, "modes") {
        Value::Object(members) => members.iter().map(|(k, v)| (k.clone(), v)).collect(),
        other => panic!("modes: {other:?}"),
    }
}

/// Logits after each of `tokens`, one `step` at a time.
fn stepped_rows(model: &Model<'_>, options: &Options, tokens: &[u32]) -> Vec<f32> {
    let v = model.logits_len();
    let mut state = model.new_state(options).unwrap();
    let mut rows = vec![0.0f32; tokens.len() * v];
    for (t, row) in tokens.iter().zip(rows.chunks_exact_mut(v)) {
        model.step(&mut state, *t, row).unwrap();
    }
    rows
}

/// Prompt then greedy tokens (the sequence every mode's rows cover).
fn sequence(case: &Case, mode: &Value) -> (Vec<u32>, Vec<u32>) {
    (ids(get(&case.json, "prompt_ids")), ids(get(mode, "greedy")))
}

/// Prefills the prompt, then decodes greedily, feeding the recorded tokens so every row sees
/// the reference's inputs, and checks the run against the record; returns the rows too.
fn check_mode(case: &Case, mode_name: &str, mode: &Value) -> (ModeResult, Vec<f32>) {
    let container = V2Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let options = mode_options(&model, mode_name, mode);
    let (prompt, greedy) = sequence(case, mode);
    let v = model.logits_len();

    let mut state = model.new_state(&options).unwrap();
    let mut rows = vec![0.0f32; (prompt.len() + greedy.len()) * v];
    model.prefill_rows(&mut state, &prompt, &mut rows[..prompt.len() * v]).unwrap();
    let mut ours = Vec::new();
    for (k, &t) in greedy.iter().enumerate() {
        let at = prompt.len() - 1 + k;
        ours.push(argmax(&rows[at * v..(at + 1) * v]));
        model.step(&mut state, t, &mut rows[(at + 1) * v..(at + 2) * v]).unwrap();
    }
    (check_rows(case, mode_name, mode, mode_name.starts_with("f32"), &rows, v, &ours), rows)
}

fn check_modes(pick: impl Fn(&str) -> bool) {
    let mut seen = 0;
    for case in cases() {
        for (name, mode) in modes(&case).into_iter().filter(|(n, _)| pick(n)) {
            let (r, _) = check_mode(&case, &name, mode);
            let window = num(get(mode, "window"));
            eprintln!(
                "v2 {name:8} {:16} window {window:>3}: worst row deviation {:.3e} (bar {:.3e}), greedy tokens checked: {}",
                case.name, r.worst, r.bar, r.tokens_checked
            );
            seen += 1;
        }
    }
    assert!(seen > 0, "no case records the mode");
}

#[test]
fn f32_logits_and_every_greedy_token_match_the_exact_reference_windowed_and_full_causal() {
    check_modes(|m| m.starts_with("f32"));
}

/// Deploy's A8 paths as in the v3 test of the same name. Worst row deviation / bar, integer
/// kernel | f32 kernels on the rotated codes | before: mixed_window 1.68e-2 | 1.49e-2 | 1.68e-2 /
/// 2.10e-2, system_eos 7.2e-3 | 1.49e-2 | 1.49e-2 / 1.57e-2.
#[test]
fn deploy_numerics_match_the_deploy_reference_within_its_measured_tolerance() {
    check_modes(|m| m == "deploy");
}

#[test]
fn a_window_changes_nothing_until_the_sequence_outgrows_it_and_then_follows_the_reference() {
    let mut seen = 0;
    for case in cases() {
        let ms = modes(&case);
        let (Some((_, windowed)), Some((_, full))) =
            (ms.iter().find(|(n, _)| n == "f32"), ms.iter().find(|(n, _)| n == "f32_full"))
        else {
            continue;
        };
        let window = num(get(windowed, "window")) as usize;
        assert!(window > 0, "{}: f32_full is recorded only for a windowed header", case.name);
        let (_, a) = check_mode(&case, "f32", windowed);
        let (_, b) = check_mode(&case, "f32_full", full);
        let v = a.len() / num(get(get(windowed, "logits"), "rows")) as usize;
        let first_differing = a.chunks_exact(v).zip(b.chunks_exact(v)).position(|(x, y)| x != y);
        let recorded =
            num(get(get(&case.json, "cross_checks"), "f32_vs_f32_full_first_differing_row"))
                as usize;
        eprintln!("v2 window  {:16} window {window}: first row where windowed and full-causal logits differ: {first_differing:?}", case.name);
        assert_eq!(
            first_differing,
            Some(window),
            "{}: rows before the window must agree bit for bit",
            case.name
        );
        assert_eq!(recorded, window, "{}: the reference differs from the same row", case.name);
        seen += 1;
    }
    assert!(seen > 0, "no case records both a windowed and a full-causal mode");
}

#[test]
fn prefill_in_any_chunk_size_equals_stepping_bit_for_bit_in_every_mode() {
    for case in cases() {
        let container = V2Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let v = model.logits_len();
        for (name, mode) in modes(&case) {
            let (prompt, greedy) = sequence(&case, mode);
            let tokens: Vec<u32> = prompt.into_iter().chain(greedy).collect();
            for kv in [KvPrecision::F32, KvPrecision::Int8] {
                let options = Options { kv, ..mode_options(&model, &name, mode) };
                let stepped = stepped_rows(&model, &options, &tokens);
                for chunk in [1, 7, 16, 64] {
                    let opts = Options { prefill_chunk: chunk, ..options };
                    let mut state = model.new_state(&opts).unwrap();
                    let mut rows = vec![0.0f32; tokens.len() * v];
                    model.prefill_rows(&mut state, &tokens, &mut rows).unwrap();
                    assert!(
                        rows.iter().zip(&stepped).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{} {name} {kv:?}: prefill in chunks of {chunk} differs from stepping",
                        case.name
                    );
                    let mut state = model.new_state(&opts).unwrap();
                    let mut last = vec![0.0f32; v];
                    model.prefill(&mut state, &tokens, &mut last).unwrap();
                    assert_eq!(
                        last,
                        stepped[stepped.len() - v..],
                        "{} {name} {kv:?}: last-row prefill",
                        case.name
                    );
                }
            }
        }
    }
}

fn head_kind(name: &str) -> HeadKind {
    match name {
        "embedding" => HeadKind::Contrastive,
        "confidence" => HeadKind::Confidence,
        other => panic!("unknown head {other}"),
    }
}

#[test]
fn probe_heads_match_the_reference_in_every_recorded_window_and_absent_heads_are_reported_absent() {
    let mut present = 0;
    for case in cases() {
        let heads = get(&case.json, "heads");
        let container = V2Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        for name in ["embedding", "confidence"] {
            let Some(h) = heads.get(name) else { continue };
            let kind = head_kind(name);
            for c in get(h, "cases").as_array().unwrap() {
                assert!(
                    matches!(c.get("quant"), Some(Value::Bool(false))),
                    "{}: heads are recorded in f32",
                    case.name
                );
                let tokens = ids(get(c, "tokens"));
                let window = num(get(c, "window")) as usize;
                let want = floats(get(c, "output"));
                let options = Options { window, track_heads: true, ..model.default_options() };
                let mut state = model.new_state(&options).unwrap();
                let mut row = vec![0.0f32; model.logits_len()];
                model.prefill(&mut state, &tokens, &mut row).unwrap();
                let got = model.head(&state, kind).unwrap();
                let dev = deviation(&got, &want);
                eprintln!(
                    "v2 head   {:16} {name:10} window {window:>3}, {:>3} tokens: deviation {dev:.3e} ({} values)",
                    case.name,
                    tokens.len(),
                    got.len()
                );
                assert_eq!(got.len(), want.len(), "{} {name}: output width", case.name);
                assert!(
                    dev <= F32_BAR,
                    "{} {name} window {window}: deviates by {dev:.3e}",
                    case.name
                );
                present += 1;
            }
        }
        for absent in heads.get("absent_heads").and_then(Value::as_array).unwrap_or(&[]) {
            let kind = head_kind(absent.as_str().unwrap());
            assert!(
                model.heads().all(|k| k != kind),
                "{}: {absent:?} listed absent but present",
                case.name
            );
            let options = Options { track_heads: true, ..model.default_options() };
            let mut state = model.new_state(&options).unwrap();
            let mut row = vec![0.0f32; model.logits_len()];
            model.step(&mut state, ids(get(&case.json, "prompt_ids"))[0], &mut row).unwrap();
            assert!(
                matches!(model.head(&state, kind), Err(Error::Unsupported { .. })),
                "{}: absent head",
                case.name
            );
        }
    }
    assert!(present > 0, "no case records a probe head");
}

fn first_model_case() -> Case {
    cases().into_iter().next().unwrap()
}

fn fresh(model: &Model<'_>, max_tokens: usize, window: usize) -> State {
    model.new_state(&Options { max_tokens, window, ..model.default_options() }).unwrap()
}

#[test]
fn a_window_wider_than_the_allocated_rings_is_a_typed_error_that_changes_nothing() {
    let case = first_model_case();
    let container = V2Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let mut row = vec![0.0f32; model.logits_len()];
    let mut state = fresh(&model, 64, 8);
    model.prefill(&mut state, &[2, 10, 11], &mut row).unwrap();
    assert_eq!(state.kv_bytes(), model.kv_bytes(3, KvPrecision::F32, 8));
    for wider in [0, 9, 64] {
        assert!(
            matches!(state.set_window(wider), Err(Error::InvalidArgument { name: "window", .. })),
            "window {wider}"
        );
        assert_eq!((state.window(), state.position()), (8, 3));
    }
    state.set_window(4).unwrap();
    assert_eq!((state.window(), state.position()), (4, 0));
    // A state whose rings hold the whole session can take any window, full causal included.
    let mut state = fresh(&model, 16, 32);
    state.set_window(0).unwrap();
    model.prefill(&mut state, &[2; 16], &mut row).unwrap();
    assert_eq!(state.kv_bytes(), model.kv_bytes(16, KvPrecision::F32, 0));
    assert!(state.is_full_causal());
}

#[test]
fn the_window_in_force_is_the_headers_unless_the_options_change_it() {
    for case in cases() {
        let container = V2Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        assert_eq!(
            model.default_options().window,
            container.header.kv_window as usize,
            "{}",
            case.name
        );
        assert_eq!(
            model.default_options().kv,
            KvPrecision::F32,
            "{}: v2 keeps its KV in f32",
            case.name
        );
    }
}

#[test]
fn an_out_of_vocabulary_id_is_a_typed_error_that_changes_nothing() {
    let case = first_model_case();
    let container = V2Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let vocab = model.geometry().vocab as u32;
    let mut state = fresh(&model, 16, 0);
    let mut row = vec![0.0f32; model.logits_len()];
    model.step(&mut state, 2, &mut row).unwrap();
    for bad in [vocab, u32::MAX] {
        assert_eq!(
            model.step(&mut state, bad, &mut row),
            Err(Error::TokenOutOfVocab { id: bad, vocab })
        );
        assert_eq!(
            model.prefill(&mut state, &[5, bad, 6], &mut row),
            Err(Error::TokenOutOfVocab { id: bad, vocab })
        );
    }
    assert_eq!(state.position(), 1);
    model.step(&mut state, vocab - 1, &mut row).unwrap();
}

#[test]
fn a_sequence_longer_than_the_session_is_a_typed_error_that_changes_nothing() {
    let case = first_model_case();
    let container = V2Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let mut row = vec![0.0f32; model.logits_len()];
    let mut state = fresh(&model, 8, 4);
    model.prefill(&mut state, &[2, 10, 11, 12, 13, 14, 15], &mut row).unwrap();
    model.step(&mut state, 16, &mut row).unwrap();
    assert_eq!(model.step(&mut state, 17, &mut row), Err(Error::ContextFull { needed: 9, max: 8 }));
    assert_eq!(state.position(), 8);
    let mut state = fresh(&model, 8, 0);
    assert_eq!(
        model.prefill(&mut state, &[2; 9], &mut row),
        Err(Error::ContextFull { needed: 9, max: 8 })
    );
    assert_eq!(state.position(), 0);
    let too_long =
        Options { max_tokens: model.geometry().max_seq_len + 1, ..model.default_options() };
    assert!(matches!(model.new_state(&too_long), Err(Error::InvalidArgument { .. })));
}

#[test]
// With threads the forward pass runs on pool threads, which this per-thread count does not see.
#[cfg_attr(feature = "threads", ignore = "counts one thread's allocations")]
fn decoding_and_prefilling_do_no_heap_work_in_any_mode() {
    for case in cases() {
        let container = V2Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let prompt = ids(get(&case.json, "prompt_ids"));
        let mut row = vec![0.0f32; model.logits_len()];
        for numerics in [Numerics::Exact, Numerics::Deploy] {
            for kv in [KvPrecision::F32, KvPrecision::Int8] {
                let options =
                    Options { numerics, kv, track_heads: true, ..model.default_options() };
                let mut state = model.new_state(&options).unwrap();
                model.prefill(&mut state, &prompt, &mut row).unwrap();
                let mut quiet = 0;
                for _ in 0..8 {
                    let (before, kv_before) = (allocations(), state.kv_bytes());
                    let next = argmax(&row);
                    model.step(&mut state, next, &mut row).unwrap();
                    if state.kv_bytes() == kv_before {
                        assert_eq!(
                            allocations(),
                            before,
                            "{} {numerics:?} {kv:?}: heap allocations between growth steps",
                            case.name
                        );
                        quiet += 1;
                    }
                }
                assert!(
                    quiet >= 6,
                    "{} {numerics:?} {kv:?}: the rings grew on {} of 8 steps",
                    case.name,
                    8 - quiet
                );
            }
        }
    }
}

/// Upstream's Needle 2 keeps keys and values in f32; the int8 cache is this runtime's memory
/// option. Its reference (`kv8`, tools/reference/v2_fixtures.py) applies Needle 3's per-head
/// int8 fake-quant to upstream's v2 queries, keys and values; the runtime is held to that
/// reference's own measured noise, like every other mode.
#[test]
fn the_int8_kv_cache_matches_its_reference_within_the_measured_tolerance() {
    check_modes(|m| m == "kv8");
    for case in cases() {
        let container = V2Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let Some((_, mode)) = modes(&case).into_iter().find(|(n, _)| n == "kv8") else { continue };
        let options = mode_options(&model, "kv8", mode);
        let (prompt, greedy) = sequence(&case, mode);
        let tokens: Vec<u32> = prompt.into_iter().chain(greedy).collect();
        let mut f32_state = model.new_state(&Options { kv: KvPrecision::F32, ..options }).unwrap();
        let mut int8_state = model.new_state(&options).unwrap();
        let mut row = vec![0.0f32; model.logits_len()];
        model.prefill(&mut f32_state, &tokens, &mut row).unwrap();
        model.prefill(&mut int8_state, &tokens, &mut row).unwrap();
        eprintln!(
            "v2 kv8     {:16} KV {} B instead of {} B",
            case.name,
            int8_state.kv_bytes(),
            f32_state.kv_bytes()
        );
        assert!(
            4 * int8_state.kv_bytes() < 2 * f32_state.kv_bytes(),
            "{}: int8 KV is not smaller",
            case.name
        );
    }
}

#[test]
fn a_needle_2_container_is_refused_by_the_needle_3_reader() {
    let case = first_model_case();
    assert_eq!(
        V3Container::parse(&case.bytes).err(),
        Some(Error::WrongGeneration { expected: 3, found: 2 })
    );
}
