//! The Needle 3 forward pass against upstream's own outputs (tests/fixtures/v3/<case>/: a
//! container written by upstream's exporter, and case.json with the logits, greedy tokens,
//! probe-head outputs and ladder rungs that upstream's model computes from that container in
//! each numerics mode; see notes in tools/reference/v3_fixtures.py).
//!
//! Modes: `f32` (exact numerics, f32 KV cache), `kv8` (int8 KV cache: q, k, v int8-rounded per
//! head) and `deploy` (upstream's deployment numerics with the int8 cache). f32 must match to
//! 1e-4 of each row's largest logit with every greedy token identical; the int8 modes within
//! the tolerance the generator measured by moving the weights one part in a million, with
//! tokens identical over the greedy steps whose margin clearly exceeds that noise.
//!
//! `V3_FIXTURES=<dir>` points the tests at another fixture tree (e.g. one being regenerated).
mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use common::{
    argmax, check_rows, deviation, floats, get, ids, num, nums, Case, ModeResult, F32_BAR,
};
use counting_alloc::allocations;
use needle_web::container::V3Container;
use needle_web::json::Value;
use needle_web::v3::{HeadKind, KvPrecision, Model, Numerics, Options, State};
use needle_web::Error;

fn cases() -> Vec<Case> {
    common::cases("v3")
}

fn mode_options(model: &Model<'_>, mode: &str) -> Options {
    let (kv, numerics) = match mode {
        "f32" => (KvPrecision::F32, Numerics::Exact),
        "kv8" => (KvPrecision::Int8, Numerics::Exact),
        "deploy" => (KvPrecision::Int8, Numerics::Deploy),
        other => panic!("unknown mode {other}"),
    };
    Options { kv, numerics, ..model.default_options() }
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

/// Prefills the prompt, then decodes greedily, feeding the recorded tokens so every row sees
/// the reference's inputs, and checks the run against the record.
fn check_mode(case: &Case, mode_name: &str) -> Option<ModeResult> {
    let mode = case.json.get("modes")?.get(mode_name)?;
    let container = V3Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let options = mode_options(&model, mode_name);
    let prompt = ids(get(&case.json, "prompt_ids"));
    let greedy = ids(get(mode, "greedy"));
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
    Some(check_rows(case, mode_name, mode, mode_name == "f32", &rows, v, &ours))
}

fn check_all_cases(mode: &str) {
    let mut seen = 0;
    for case in cases() {
        if let Some(r) = check_mode(&case, mode) {
            eprintln!(
                "v3 {mode:6} {:24} worst row deviation {:.3e} (bar {:.3e}), greedy tokens checked: {}",
                case.name, r.worst, r.bar, r.tokens_checked
            );
            seen += 1;
        }
    }
    assert!(seen > 0, "no case records mode {mode}");
}

#[test]
fn f32_logits_and_every_greedy_token_match_the_exact_reference() {
    check_all_cases("f32");
}

#[test]
fn the_int8_kv_cache_matches_the_kv8_reference_within_its_measured_tolerance() {
    check_all_cases("kv8");
}

/// Deploy rotates each A8 input's int8 codes exactly in integers (`kernels::cq_a8`); 4-bit
/// matrices then run the integer kernel on x86-64 with AVX2 (its one approximation: the codebook
/// held to ~2^-27 of its largest level at group 128), everything else the f32 kernels on the
/// rotated codes. Worst row deviation / bar, integer kernel | f32 kernels on the rotated codes |
/// the f32 kernels on the int8 round trip (before): eos_confidence_rung 1.65e-2 | 1.61e-2 |
/// 1.67e-2 / 1.98e-2, local_global_taps 8.7e-3 | 1.16e-2 | 7.9e-3 / 1.97e-2,
/// no_engram_empty_tools 1.30e-2 | 6.1e-3 | 6.1e-3 / 1.34e-2, widths_sites_outvocab 1.47e-2 in
/// all three / 1.63e-2; the same tokens over every robust prefix. Deploy numerics are chaotic (one
/// flipped int8 rounding moves rows by ~1e-2), so the bar is not loosened: with an 8-bit codebook
/// half the rows exceeded it, with a 16-bit one a few; at this precision none do.
#[test]
fn deploy_numerics_match_the_deploy_reference_within_its_measured_tolerance() {
    check_all_cases("deploy");
}

#[test]
fn prefill_in_any_chunk_size_equals_stepping_bit_for_bit_in_every_mode() {
    for case in cases() {
        let container = V3Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let v = model.logits_len();
        for mode in ["f32", "kv8", "deploy"] {
            let Some(m) = case.json.get("modes").and_then(|ms| ms.get(mode)) else { continue };
            let tokens: Vec<u32> = ids(get(&case.json, "prompt_ids"))
                .into_iter()
                .chain(ids(get(m, "greedy")))
                .collect();
            let options = mode_options(&model, mode);
            let stepped = stepped_rows(&model, &options, &tokens);
            for chunk in [1, 7, 16, 64] {
                let opts = Options { prefill_chunk: chunk, ..options };
                let mut state = model.new_state(&opts).unwrap();
                let mut rows = vec![0.0f32; tokens.len() * v];
                model.prefill_rows(&mut state, &tokens, &mut rows).unwrap();
                assert!(
                    rows.iter().zip(&stepped).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{} {mode}: prefill in chunks of {chunk} differs from stepping",
                    case.name
                );
                let mut state = model.new_state(&opts).unwrap();
                let mut last = vec![0.0f32; v];
                model.prefill(&mut state, &tokens, &mut last).unwrap();
                assert_eq!(
                    last,
                    stepped[stepped.len() - v..],
                    "{} {mode}: last-row prefill",
                    case.name
                );
            }
        }
    }
}

#[test]
fn ladder_rungs_run_upstreams_layers_and_match_their_reference() {
    let mut seen = 0;
    for case in cases() {
        let Some(rungs) = case.json.get("rungs").and_then(Value::as_array) else { continue };
        let container = V3Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let v = model.logits_len();
        let prompt = ids(get(&case.json, "prompt_ids"));
        for rung in rungs {
            let depth = num(get(rung, "depth")) as usize;
            let layers: Vec<usize> =
                nums(get(rung, "layer_indices")).into_iter().map(|x| x as usize).collect();
            assert_eq!(
                model.layer_indices(depth).unwrap(),
                layers,
                "{}: rung {depth} layers",
                case.name
            );
            let greedy = ids(get(rung, "greedy"));
            let options = Options { depth, ..mode_options(&model, "f32") };
            let mut state = model.new_state(&options).unwrap();
            let mut row = vec![0.0f32; v];
            model.prefill(&mut state, &prompt, &mut row).unwrap();
            let mut ours = Vec::new();
            for &t in &greedy {
                ours.push(argmax(&row));
                model.step(&mut state, t, &mut row).unwrap();
            }
            assert_eq!(ours, greedy, "{}: rung {depth} greedy tokens", case.name);
            let last = floats(get(rung, "last_row"));
            let dev = deviation(&row, &last);
            eprintln!(
                "v3 rung{depth:<3} {:24} last row deviation {dev:.3e}, {} greedy tokens identical",
                case.name,
                ours.len()
            );
            assert!(dev <= F32_BAR, "{}: rung {depth} last row deviates by {dev:.3e}", case.name);
            seen += 1;
        }
    }
    assert!(seen > 0, "no case records a ladder rung");
}

fn head_kind(name: &str) -> HeadKind {
    match name {
        "embedding" => HeadKind::Embedding,
        "confidence" => HeadKind::Confidence,
        "router" => HeadKind::Router,
        other => panic!("unknown head {other}"),
    }
}

#[test]
fn probe_heads_match_the_reference_and_absent_heads_are_reported_absent() {
    let mut present = 0;
    for case in cases() {
        let heads = get(&case.json, "heads");
        let container = V3Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let options = Options { track_heads: true, ..mode_options(&model, "f32") };
        for name in ["embedding", "confidence", "router"] {
            let kind = head_kind(name);
            let Some(h) = heads.get(name) else { continue };
            let tokens = ids(get(h, "tokens"));
            let want = floats(get(h, "output"));
            let mut state = model.new_state(&options).unwrap();
            let mut row = vec![0.0f32; model.logits_len()];
            model.prefill(&mut state, &tokens, &mut row).unwrap();
            let got = model.head(&state, kind).unwrap();
            let dev = deviation(&got, &want);
            eprintln!(
                "v3 head   {:24} {name:10} deviation {dev:.3e} ({} values)",
                case.name,
                got.len()
            );
            assert_eq!(got.len(), want.len(), "{} {name}: output width", case.name);
            assert!(dev <= F32_BAR, "{} {name}: deviates by {dev:.3e}", case.name);
            present += 1;
        }
        for absent in heads.get("absent_heads").and_then(Value::as_array).unwrap_or(&[]) {
            let kind = head_kind(absent.as_str().unwrap());
            assert!(
                model.heads().all(|k| k != kind),
                "{}: {absent:?} listed absent but present",
                case.name
            );
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

fn fresh(model: &Model<'_>, max_tokens: usize) -> State {
    model.new_state(&Options { max_tokens, ..model.default_options() }).unwrap()
}

#[test]
fn an_out_of_vocabulary_id_is_a_typed_error_that_changes_nothing() {
    let case = first_model_case();
    let container = V3Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let vocab = model.geometry().vocab as u32;
    let mut state = fresh(&model, 16);
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
    // Ids past the output head but inside the embedding are valid inputs.
    model.step(&mut state, vocab - 1, &mut row).unwrap();
}

#[test]
fn a_sequence_longer_than_the_session_is_a_typed_error_that_changes_nothing() {
    let case = first_model_case();
    let container = V3Container::parse(&case.bytes).unwrap();
    let model = Model::new(&container).unwrap();
    let mut row = vec![0.0f32; model.logits_len()];
    let mut state = fresh(&model, 8);
    model.prefill(&mut state, &[2, 10, 11, 12, 13, 14, 15], &mut row).unwrap();
    model.step(&mut state, 16, &mut row).unwrap();
    assert_eq!(model.step(&mut state, 17, &mut row), Err(Error::ContextFull { needed: 9, max: 8 }));
    assert_eq!(state.position(), 8);
    let mut state = fresh(&model, 8);
    assert_eq!(
        model.prefill(&mut state, &[2; 9], &mut row),
        Err(Error::ContextFull { needed: 9, max: 8 })
    );
    assert_eq!(state.position(), 0);
    let max = model.geometry().max_seq_len;
    let too_long = Options { max_tokens: max + 1, ..model.default_options() };
    assert!(matches!(model.new_state(&too_long), Err(Error::InvalidArgument { .. })));
}

#[test]
fn the_int8_cache_is_the_default_where_the_container_asks_for_it() {
    for case in cases() {
        let container = V3Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let want = if container.header.kv_bits == 8 { KvPrecision::Int8 } else { KvPrecision::F32 };
        assert_eq!(model.default_options().kv, want, "{}", case.name);
    }
}

#[test]
// With threads the forward pass runs on pool threads, which this per-thread count does not see.
#[cfg_attr(feature = "threads", ignore = "counts one thread's allocations")]
fn decoding_and_prefilling_do_no_heap_work_in_any_mode() {
    for case in cases() {
        let container = V3Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let prompt = ids(get(&case.json, "prompt_ids"));
        let mut row = vec![0.0f32; model.logits_len()];
        for mode in ["f32", "kv8", "deploy"] {
            let options = Options { track_heads: true, ..mode_options(&model, mode) };
            let mut state = model.new_state(&options).unwrap();
            // The prompt reserves what it needs: the prefill allocates only that growth.
            let (before, kv_before) = (allocations(), state.kv_bytes());
            model.prefill(&mut state, &prompt, &mut row).unwrap();
            assert!(state.kv_bytes() > kv_before);
            assert_eq!(
                allocations(),
                before + growth_steps(&state),
                "{} {mode}: prefill allocations",
                case.name
            );
            let mut quiet = 0;
            for _ in 0..8 {
                let (before, kv_before) = (allocations(), state.kv_bytes());
                let next = argmax(&row);
                model.step(&mut state, next, &mut row).unwrap();
                if state.kv_bytes() == kv_before {
                    assert_eq!(
                        allocations(),
                        before,
                        "{} {mode}: heap allocations between growth steps",
                        case.name
                    );
                    quiet += 1;
                }
            }
            assert!(quiet >= 6, "{} {mode}: the rings grew on {} of 8 steps", case.name, 8 - quiet);
        }
    }
}

/// Allocations one growth of every ring of `state` makes: one per buffer of each ring (keys
/// and values, plus their scales in int8), and one for the attention scores.
fn growth_steps(state: &needle_web::v3::State) -> usize {
    let per_ring = if state.options().kv == KvPrecision::Int8 { 4 } else { 2 };
    per_ring * state.options().depth + 1
}

#[test]
fn a_states_kv_rings_hold_exactly_the_bytes_the_model_predicts() {
    for case in cases() {
        let container = V3Container::parse(&case.bytes).unwrap();
        let model = Model::new(&container).unwrap();
        let layers = model.geometry().num_layers;
        for kv in [KvPrecision::F32, KvPrecision::Int8] {
            for depth in [2.min(layers), layers] {
                for max_tokens in [1, 40, model.geometry().max_seq_len] {
                    let options = Options { kv, depth, max_tokens, ..model.default_options() };
                    let mut state = model.new_state(&options).unwrap();
                    assert_eq!(state.kv_bytes(), 0, "{}: a fresh state holds no KV", case.name);
                    // A prompt of n tokens holds the bytes of an n-token session, whatever
                    // the capacity; decoding past it doubles, never past the capacity.
                    let n = max_tokens.min(5);
                    let mut row = vec![0.0f32; model.logits_len()];
                    model.prefill(&mut state, &vec![2; n], &mut row).unwrap();
                    assert_eq!(
                        state.kv_bytes(),
                        model.kv_bytes(n, kv, depth).unwrap(),
                        "{}",
                        case.name
                    );
                    if n < max_tokens {
                        model.step(&mut state, 2, &mut row).unwrap();
                        let grown = (2 * n).min(max_tokens);
                        assert_eq!(
                            state.kv_bytes(),
                            model.kv_bytes(grown, kv, depth).unwrap(),
                            "{}",
                            case.name
                        );
                    }
                }
            }
        }
    }
}
