//! The `.cact` reader against upstream's own containers (tests/fixtures/{v3,v2}/<case>/model.cact
//! with the geometry and per-tensor records upstream's `read_export` reported, in case.json) and
//! against containers written by a test-side builder from upstream's exporters, intact and
//! corrupted.
mod common;
mod container {
    // Shared with tests/crafted_tokenizer.rs; each test crate uses part of it.
    #[allow(dead_code)]
    pub mod builder;
}

use std::fs;
use std::path::{Path, PathBuf};

use common::{floats, load_json, num};
use container::builder::{self, assemble, cq_bytes, Built, Head, Spec, RECORD, V2, V3};
use needle_web::container::{self as cact, Container, DType, Field, V2Container, V3Container};
use needle_web::json::Value;
use needle_web::Error;

// ---------------------------------------------------------------- committed fixtures

fn fixture_models(generation: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(generation);
    let mut models: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path().join("model.cact"))
        .filter(|p| p.exists())
        .collect();
    models.sort();
    assert!(!models.is_empty(), "no committed {generation} fixtures under {}", dir.display());
    models
}

fn all_fixture_models() -> Vec<PathBuf> {
    let mut all = fixture_models("v3");
    all.extend(fixture_models("v2"));
    all
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn case_of(model: &Path) -> Value {
    load_json(&model.with_file_name("case.json"))
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(s) => s.parse().unwrap(),
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().expect("integer list").iter().map(int).collect()
}

fn assert_field_matches(name: &str, field: &Field<'_>, want: &Value, model: &Path) {
    let ctx = || format!("{}: geometry.{name}", model.display());
    match *field {
        Field::Int(v) => assert_eq!(v as i64, int(want), "{}", ctx()),
        // Fixtures print f32 values in their shortest round-trip form.
        Field::Real(v) => assert_eq!(v, num(want) as f32, "{}", ctx()),
        Field::List(l) => {
            assert_eq!(l.iter().map(|&x| i64::from(x)).collect::<Vec<_>>(), ints(want), "{}", ctx())
        }
        Field::LayerMask(m) => {
            let layers: Vec<i64> = (0..64).filter(|i| m >> i & 1 == 1).collect();
            assert_eq!(layers, ints(want), "{}", ctx());
        }
    }
}

#[test]
fn every_committed_fixture_parses_with_the_geometry_and_records_upstream_reported() {
    for (generation, number) in [("v3", 3), ("v2", 2)] {
        for model in fixture_models(generation) {
            let bytes = read(&model);
            let case = case_of(&model);
            let c = cact::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", model.display()));
            assert_eq!(c.generation().number(), number, "{}", model.display());
            assert_eq!(int(case.get("generation").unwrap()), i64::from(number));

            let fields = c.header_fields();
            let Some(Value::Object(geometry)) = case.get("geometry") else {
                panic!("{}: no geometry", model.display())
            };
            for (key, want) in geometry {
                if key == "codebook" {
                    let got: Vec<f32> = c.codebooks().iter().collect();
                    let want = floats(want);
                    assert_eq!(got, want, "{}: codebook", model.display());
                    continue;
                }
                let (_, field) = fields.iter().find(|(name, _)| name == key).unwrap_or_else(|| {
                    panic!(
                        "{}: geometry.{key} is not a header field the reader knows",
                        model.display()
                    )
                });
                assert_field_matches(key, field, want, &model);
            }

            let records = case.get("tensors").and_then(Value::as_array).expect("tensors");
            assert_eq!(c.tensors().len(), records.len(), "{}: record count", model.display());
            for (t, want) in c.tensors().iter().zip(records) {
                let v = &t.view;
                let ctx = format!("{}: record {} ({})", model.display(), v.index, t.name);
                if let Some(name) = want.get("name").and_then(Value::as_str) {
                    assert_eq!(t.name.to_string(), name, "{ctx}: name");
                }
                assert_eq!(
                    i64::from(v.dtype.code()),
                    int(want.get("dtype").unwrap()),
                    "{ctx}: dtype"
                );
                let dims: Vec<i64> = v.dims().iter().map(|&d| i64::from(d)).collect();
                assert_eq!(dims, ints(want.get("shape").unwrap()), "{ctx}: shape");
                assert_eq!(i64::from(v.bits), int(want.get("bits").unwrap()), "{ctx}: bits");
                assert_eq!(i64::from(v.group), int(want.get("group").unwrap()), "{ctx}: group");
            }
        }
    }
}

/// Byte positions of every section of a parsed container: header end, codebook end,
/// directory end, and each tensor's (offset, len).
fn sections(bytes: &[u8]) -> (usize, usize, usize, Vec<(usize, usize)>) {
    let c = cact::parse(bytes).unwrap();
    let header_len = match c.generation() {
        cact::Generation::V3 => cact::V3_HEADER_LEN,
        cact::Generation::V2 => cact::V2_HEADER_LEN,
    } as usize;
    let codebook_end = header_len + 4 * cact::CODEBOOK_LEN as usize;
    let dir_end = codebook_end + RECORD * c.tensors().len();
    let blobs = c.tensors().iter().map(|t| (t.view.offset as usize, t.view.data.len())).collect();
    (header_len, codebook_end, dir_end, blobs)
}

/// Cuts `bytes` at every section boundary (and inside each section) and checks the refusal.
fn assert_truncations_refused(bytes: &[u8], what: &str) {
    let (header_len, codebook_end, dir_end, blobs) = sections(bytes);
    let mut cuts =
        vec![0, 3, 4, header_len - 1, header_len, codebook_end - 1, codebook_end, dir_end - 1];
    cuts.extend((codebook_end..dir_end).step_by(RECORD / 2));
    for &(offset, len) in &blobs {
        cuts.extend([offset, offset + len / 2, offset + len - 1]);
    }
    for cut in cuts {
        let err = cact::parse(&bytes[..cut]).expect_err(&format!("{what}: cut at {cut} parsed"));
        match err {
            Error::Truncated { section, .. } => {
                let want = if cut < header_len {
                    "header"
                } else if cut < codebook_end {
                    "codebook"
                } else {
                    "directory"
                };
                assert!(
                    cut < dir_end,
                    "{what}: cut at {cut} in tensor data reported as truncated {section}"
                );
                assert_eq!(section, want, "{what}: cut at {cut}");
            }
            Error::BadTensor { index, field: "nbytes", .. } => {
                let first_cut = blobs.iter().position(|&(o, l)| o + l > cut).unwrap();
                assert_eq!(index as usize, first_cut, "{what}: cut at {cut}");
            }
            other => panic!("{what}: cut at {cut} gave {other:?}"),
        }
    }
}

#[test]
fn truncating_a_committed_fixture_anywhere_names_the_section_or_the_first_cut_tensor() {
    for model in all_fixture_models() {
        assert_truncations_refused(&read(&model), &model.display().to_string());
    }
}

/// Deterministic xorshift, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Flips random bytes (mostly in the header and directory, where they change meaning) and cuts
/// at random lengths; the reader must answer every variant without panicking.
fn fuzz(bytes: &[u8], seed: u64, rounds: usize) -> (usize, usize) {
    let (_, _, dir_end, _) = sections(bytes);
    let mut rng = Rng(seed);
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..rounds {
        let mut m = bytes.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = if rng.below(5) < 4 { rng.below(dir_end) } else { rng.below(m.len()) };
            m[at] = match rng.below(4) {
                0 => 0,
                1 => 0xff,
                2 => m[at] ^ (1 << rng.below(8)),
                _ => rng.next() as u8,
            };
        }
        if rng.below(8) == 0 {
            m.truncate(rng.below(m.len()));
        }
        match cact::parse(&m) {
            Ok(c) => {
                // Whatever parses still only borrows bytes of its input.
                for t in c.tensors() {
                    let start = t.view.data.as_ptr() as usize - m.as_ptr() as usize;
                    assert!(start + t.view.data.len() <= m.len());
                }
                ok += 1;
            }
            Err(_) => refused += 1,
        }
    }
    (ok, refused)
}

#[test]
fn random_corruption_of_committed_fixtures_is_answered_without_panicking() {
    for (i, model) in all_fixture_models().iter().enumerate() {
        let (_, refused) = fuzz(&read(model), 0x9e37_79b9_7f4a_7c15 ^ i as u64, 4000);
        assert!(refused > 0, "{}: no mutation was refused", model.display());
    }
}

// ---------------------------------------------------------------- builder containers

fn v3_names(c: &V3Container<'_>) -> Vec<String> {
    c.tensors.iter().map(|t| t.name.to_string()).collect()
}

fn position(names: &[String], name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no {name}"))
}

/// The published needle3.cact's structure: 20 layers with conv taps, 5 Engram sites, one
/// confidence head (small widths; record positions depend only on the structure).
fn published_layout() -> V3 {
    V3 {
        num_layers: 20,
        sites: vec![3, 7, 11, 15, 19],
        global_layers: (1 << 4) | (1 << 9) | (1 << 14) | (1 << 19),
        mhc_lanes: 4,
        heads: vec![Head { code: 2, k: 4, q: 4, out: 1 }],
        ..V3::tiny()
    }
}

#[test]
fn the_published_needle3_layout_puts_every_record_where_upstream_does() {
    let built = published_layout().build();
    let c = V3Container::parse(&built.bytes).unwrap();
    let names = v3_names(&c);
    assert_eq!(names.len(), 581);
    assert_eq!(names, built.names);
    assert_eq!(&names[5..8], ["layer00.q_taps", "layer00.k_taps", "layer00.v_taps"]);
    assert_eq!(position(&names, "layer19.cond_u"), 540);
    assert_eq!(position(&names, "mhc_a_pre"), 541);
    assert_eq!(&names[547..550], ["mhc_phi_pre", "mhc_phi_post", "mhc_phi_res"]);
    assert_eq!(&names[550..552], ["hada_p1", "hada_p2"]);
    assert_eq!(position(&names, "engram0.tables"), 552);
    assert_eq!(position(&names, "engram4.taps"), 571);
    assert_eq!(position(&names, "final_norm"), 572);
    assert_eq!(position(&names, "heads.manifest"), 573);
    assert_eq!(position(&names, "confidence_head.probes"), 574);
    assert_eq!(position(&names, "confidence_head.bias"), 579);
    assert_eq!(position(&names, "tokenizer"), 580);
    assert_eq!(c.layers[0].q_taps.unwrap().index, 5);
    assert_eq!(c.hada_p1.index, 550);
    assert_eq!(c.engram.len(), 5);
    assert_eq!(c.heads.len(), 1);
    assert!(c.header.is_global(19) && !c.header.is_global(18));

    let mut all_heads = published_layout();
    all_heads.heads = vec![
        Head { code: 1, k: 4, q: 4, out: 128 },
        Head { code: 2, k: 4, q: 4, out: 1 },
        Head { code: 3, k: 4, q: 4, out: 3 },
    ];
    let built = all_heads.build();
    let c = V3Container::parse(&built.bytes).unwrap();
    assert_eq!(c.tensors.len(), 594);
    assert_eq!(
        c.heads.iter().map(|h| h.kind.key()).collect::<Vec<_>>(),
        ["embedding_head", "confidence_head", "router_head"]
    );
    assert!(c.heads[2].calibration.is_some() && c.heads[0].calibration.is_none());
}

#[test]
fn reader_names_match_upstream_exporter_names_in_both_generations() {
    let mut v3 = V3::tiny();
    v3.heads = vec![Head { code: 1, k: 2, q: 3, out: 16 }, Head { code: 3, k: 1, q: 2, out: 3 }];
    let built = v3.build();
    assert_eq!(v3_names(&V3Container::parse(&built.bytes).unwrap()), built.names);

    let built = V2::tiny().build();
    let c = V2Container::parse(&built.bytes).unwrap();
    assert_eq!(c.tensors.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(), built.names);
    assert_eq!(c.heads.len(), 2);
    assert_eq!((c.heads[0].num_probes, c.heads[0].out_dim), (4, 16));
    assert_eq!((c.heads[1].num_probes, c.heads[1].out_dim), (8, 1));
}

#[test]
fn probe_and_query_counts_come_from_the_tensor_shapes_in_both_head_layouts() {
    for fp16_heads in [false, true] {
        let mut g = V3::tiny();
        g.fp16_heads = fp16_heads;
        g.heads = vec![Head { code: 1, k: 5, q: 3, out: 24 }, Head { code: 2, k: 2, q: 7, out: 1 }];
        let built = g.build();
        let c = V3Container::parse(&built.bytes).unwrap();
        let got: Vec<_> =
            c.heads.iter().map(|h| (h.num_probes, h.num_queries, h.out_dim)).collect();
        assert_eq!(got, [(5, 3, 24), (2, 7, 1)], "fp16 layout: {fp16_heads}");
        let want_dtype = if fp16_heads { DType::F16 } else { DType::Cq };
        assert_eq!(c.heads[0].probes.dtype, want_dtype);
        assert_eq!(c.heads[0].probes.ndim, if fp16_heads { 3 } else { 2 });
    }
}

#[test]
fn every_cq_width_parses_in_needle3_and_needle2_refuses_one_bit() {
    let mut g = V3::tiny();
    g.widths = vec![1, 2, 3, 4, 5];
    let built = g.build();
    let c = V3Container::parse(&built.bytes).unwrap();
    let mut seen: Vec<u32> =
        c.tensors.iter().filter(|t| t.view.dtype == DType::Cq).map(|t| t.view.bits).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen, [1, 2, 3, 4, 5]);
    let q = &c.layers[0].q_proj;
    assert_eq!(q.data.len(), cq_bytes(q.shape[0], q.shape[1], q.group, q.bits));

    let mut g = V2::tiny();
    g.widths = vec![2, 3, 4, 5];
    assert!(V2Container::parse(&g.build().bytes).is_ok());
    g.widths = vec![4, 1];
    assert_eq!(
        V2Container::parse(&g.build().bytes).unwrap_err(),
        Error::BadTensor { index: 2, field: "bits", reason: "unsupported CQ width" }
    );
}

#[test]
fn views_borrow_exactly_their_bytes_of_the_input() {
    let built = V3::tiny().build();
    let c = V3Container::parse(&built.bytes).unwrap();
    for (t, &(offset, len)) in c.tensors.iter().zip(&built.blobs) {
        assert_eq!(t.view.data.as_ptr(), built.bytes[offset..].as_ptr(), "{}", t.name);
        assert_eq!(t.view.data.len(), len);
    }
    assert_eq!(c.tokenizer.as_ptr(), c.tensors.last().unwrap().view.data.as_ptr());
    assert_eq!(c.hada_p2.to_f32_vec(), (0..64).map(|i| i as f32).collect::<Vec<_>>());
}

#[test]
fn each_reader_refuses_the_other_generation_and_unknown_tags() {
    let v3 = V3::tiny().build().bytes;
    let v2 = V2::tiny().build().bytes;
    assert_eq!(
        V3Container::parse(&v2).unwrap_err(),
        Error::WrongGeneration { expected: 3, found: 2 }
    );
    assert_eq!(
        V2Container::parse(&v3).unwrap_err(),
        Error::WrongGeneration { expected: 2, found: 3 }
    );
    assert!(matches!(cact::parse(&v3), Ok(Container::V3(_))));
    assert!(matches!(cact::parse(&v2), Ok(Container::V2(_))));
    let mut bad = v3.clone();
    bad[0] ^= 1;
    assert_eq!(cact::parse(&bad).unwrap_err(), Error::BadTag { found: builder::V3_TAG ^ 1 });
}

fn set_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn set_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn header_field_of(err: Error) -> &'static str {
    match err {
        Error::BadHeader { field, .. } => field,
        other => panic!("expected BadHeader, got {other:?}"),
    }
}

#[test]
fn out_of_range_needle3_header_fields_are_refused_naming_the_field() {
    let built = V3::tiny().build();
    let n = built.names.len() as u32;
    // (header word, value, field named in the refusal)
    let cases: &[(usize, u32, &str)] = &[
        (1, n + 2, "num_tensors"),
        (1, n - 1, "num_tensors"),
        (1, u32::MAX, "num_tensors"),
        (19, 0, "num_tensors"), // dropping the conv taps changes the implied count
        (2, 27, "codebook_len"),
        (4, 5, "kv_bits"),
        (5, 0, "vocab_size"),
        (6, 41, "out_vocab"),
        (7, 0, "d_model"),
        (8, 0, "num_heads"),
        (9, 3, "num_kv_heads"),
        (9, 0, "num_kv_heads"),
        (10, 0, "num_layers"),
        (10, 65, "num_layers"),
        (11, 7, "qk_head_dim"),
        (12, 0, "v_head_dim"),
        (13, 0, "max_seq_len"),
        (14, 32, "hada_n"),
        (15, 0, "mhc_lanes"),
        (15, u32::MAX, "mhc_lanes"),
        (20, 0, "engram_slots"),
        (21, 23, "engram_sub_dim"),
        (22, 3, "num_engram_tables"),
        (23, 0, "engram_conv_taps"),
        (24, 2, "engram_conv_dilation"),
        (26, 0, "num_engram_orders"),
        (26, 5, "num_engram_orders"),
        (27, 0, "engram_orders"),
        (31, 17, "num_engram_sites"),
        (32, 3, "engram_layers"),
        (48, f32::NAN.to_bits(), "rope_theta"),
        (48, (-1f32).to_bits(), "rope_theta"),
    ];
    for &(word, value, field) in cases {
        let mut m = built.bytes.clone();
        set_u32(&mut m, 4 * word, value);
        let err = V3Container::parse(&m).expect_err(&format!("word {word} = {value} parsed"));
        assert_eq!(header_field_of(err), field, "word {word} = {value}");
    }
    // One record more is a count some head set implies; the longer directory then runs into
    // the first tensor's bytes.
    let mut m = built.bytes.clone();
    set_u32(&mut m, 4, n + 1);
    assert_eq!(tensor_error(&m), (0, "offset"));
}

#[test]
fn out_of_range_needle2_header_fields_are_refused_naming_the_field() {
    let built = V2::tiny().build();
    let cases: &[(usize, u32, &str)] = &[
        (1, 0, "num_tensors"),
        (2, 0, "codebook_len"),
        (7, 3, "num_kv_heads"),
        (9, 65, "num_layers"),
        (10, 7, "head_dim"),
        (12, 64, "hada_n"),
        (24, 5, "num_engram_sites"),
        (25, 2, "engram_layers"),
        (29, f32::INFINITY.to_bits(), "rope_theta"),
    ];
    for &(word, value, field) in cases {
        let mut m = built.bytes.clone();
        set_u32(&mut m, 4 * word, value);
        let err = V2Container::parse(&m).expect_err(&format!("word {word} = {value} parsed"));
        assert_eq!(header_field_of(err), field, "word {word} = {value}");
    }
}

#[test]
fn huge_geometry_is_refused_as_a_shape_mismatch_not_an_overflow_or_allocation() {
    let built = V3::tiny().build();
    let tables = position(&built.names, "engram0.tables") as u32;
    for (word, index) in [(5usize, 0u32), (20, tables)] {
        let mut m = built.bytes.clone();
        set_u32(&mut m, 4 * word, u32::MAX);
        let err = V3Container::parse(&m).unwrap_err();
        assert!(
            matches!(err, Error::BadTensor { index: i, field: "shape[0]", .. } if i == index),
            "word {word}: {err:?}"
        );
    }
}

#[test]
fn header_fields_that_size_allocations_are_bounded_before_anything_is_allocated() {
    // (word, value) edits of the v3 header, and the field each refusal names: the context
    // length, and an n-gram order with the conv dilation that must equal it.
    let built = V3::tiny().build();
    let v3: &[(&[(usize, u32)], &str)] = &[
        (&[(13, u32::MAX)], "max_seq_len"),
        (&[(13, 1 << 24)], "max_seq_len"),
        (&[(13, cact::MAX_SEQ_LEN + 1)], "max_seq_len"),
        (&[(27, 1 << 31), (24, 1 << 31)], "engram_orders"),
        (&[(28, 1 << 31), (24, 1 << 31)], "engram_orders"),
        (&[(27, cact::MAX_ENGRAM_ORDER + 1), (24, cact::MAX_ENGRAM_ORDER + 1)], "engram_orders"),
        (&[(24, 1 << 31)], "engram_conv_dilation"),
        // without Engram sites the orders still size the recent-id buffer
        (&[(31, 0), (27, 1 << 31)], "engram_orders"),
    ];
    for &(edits, field) in v3 {
        let mut m = built.bytes.clone();
        for &(word, value) in edits {
            set_u32(&mut m, 4 * word, value);
        }
        assert_eq!(header_field_of(V3Container::parse(&m).unwrap_err()), field, "{edits:?}");
    }
    let mut at_limit = built.bytes.clone();
    set_u32(&mut at_limit, 4 * 13, cact::MAX_SEQ_LEN);
    V3Container::parse(&at_limit).expect("a context of MAX_SEQ_LEN is allowed");

    // v2: max_seq_len with and without a window.
    let built = V2::tiny().build();
    for window in [0, 8] {
        let mut m = built.bytes.clone();
        set_u32(&mut m, 4 * 3, window);
        set_u32(&mut m, 4 * 11, u32::MAX);
        assert_eq!(
            header_field_of(V2Container::parse(&m).unwrap_err()),
            "max_seq_len",
            "kv_window {window}"
        );
    }
}

#[test]
fn global_layer_bits_past_the_stack_are_ignored_like_upstreams_reader() {
    let mut g = V3::tiny();
    g.global_layers = 0b1100; // layer 3 does not exist in a 3-layer stack
    let built = g.build();
    let c = V3Container::parse(&built.bytes).unwrap();
    assert_eq!(c.header.global_layers, 0b100);
    assert!(c.header.is_global(2) && !c.header.is_global(3));
}

fn tensor_error(bytes: &[u8]) -> (u32, &'static str) {
    match cact::parse(bytes).unwrap_err() {
        Error::BadTensor { index, field, .. } => (index, field),
        other => panic!("expected BadTensor, got {other:?}"),
    }
}

#[test]
fn malformed_directory_records_are_refused_naming_the_record_and_field() {
    let built = V3::tiny().build();
    let len = built.bytes.len() as u64;
    let last = built.records.len() - 1;
    type Edit = Box<dyn Fn(&mut [u8], usize)>;
    let cases: Vec<(usize, Edit, &str)> = vec![
        (1, Box::new(|m, r| m[r] = 9), "dtype"),
        (1, Box::new(|m, r| m[r] = 2), "nbytes"), // FP32 of the same shape needs twice the bytes
        (1, Box::new(|m, r| m[r + 1] = 5), "ndim"),
        (1, Box::new(|m, r| set_u32(m, r + 4, 0)), "shape[0]"),
        (1, Box::new(|m, r| set_u64(m, r + 28, 98)), "nbytes"),
        (1, Box::new(|m, r| set_u64(m, r + 20, 200)), "offset"),
        (1, Box::new(move |m, r| set_u64(m, r + 20, len + 64)), "offset"),
        (1, Box::new(|m, r| set_u64(m, r + 20, u64::MAX - 8)), "offset"),
        (1, Box::new(|m, r| set_u64(m, r + 28, u64::MAX)), "nbytes"),
        (
            1,
            Box::new(|m, r| {
                m[r + 1] = 4;
                for i in 0..4 {
                    set_u32(m, r + 4 + 4 * i, u32::MAX);
                }
            }),
            "shape",
        ),
        (0, Box::new(|m, r| set_u32(m, r + 40, 6)), "bits"),
        (0, Box::new(|m, r| set_u32(m, r + 40, 0)), "bits"),
        (0, Box::new(|m, r| set_u32(m, r + 36, 24)), "group"),
        (0, Box::new(|m, r| set_u32(m, r + 36, 0)), "group"),
        (
            0,
            Box::new(|m, r| {
                m[r + 1] = 3;
                set_u32(m, r + 12, 1);
            }),
            "ndim",
        ),
        (
            last,
            Box::new(|m, r| {
                m[r + 1] = 1;
                set_u32(m, r + 4, 1);
            }),
            "ndim",
        ),
    ];
    for (record, edit, field) in cases {
        let mut m = built.bytes.clone();
        edit(&mut m, built.records[record]);
        assert_eq!(tensor_error(&m), (record as u32, field), "record {record} ({field})");
    }
}

#[test]
fn tensors_sharing_bytes_are_refused() {
    let built = V3::tiny().build();
    let mut m = built.bytes.clone();
    // Point layer00.post_norm (FP16, d_model) at layer00.norm_in's bytes (same size).
    let post_norm = position(&built.names, "layer00.post_norm");
    set_u64(&mut m, built.records[post_norm] + 20, built.blobs[1].0 as u64);
    assert!(
        matches!(cact::parse(&m).unwrap_err(), Error::BadTensor { field: "offset", reason, .. } if reason.contains("overlaps"))
    );
}

/// Rebuilds a tiny v3 container after `edit` changes its specs.
fn v3_with(edit: impl FnOnce(&mut Vec<Spec>)) -> Built {
    let g = V3::tiny();
    let mut specs = g.specs();
    edit(&mut specs);
    assemble(g.header(specs.len() as u32), specs)
}

fn spec_at<'s>(specs: &'s mut [Spec], name: &str) -> &'s mut Spec {
    specs.iter_mut().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn a_record_that_is_not_what_its_canon_position_holds_is_refused() {
    // q_proj must have num_heads * qk_head_dim rows.
    let built = v3_with(|s| {
        let q = spec_at(s, "layer00.q_proj");
        q.shape[0] = 16;
        q.blob.truncate(cq_bytes(16, 48, 16, 4));
    });
    assert_eq!(
        cact::parse(&built.bytes).unwrap_err(),
        Error::BadTensor {
            index: 2,
            field: "shape[0]",
            reason: "must equal num_heads * qk_head_dim"
        }
    );
    // A projection must be CQ.
    let built = v3_with(|s| {
        let q = spec_at(s, "layer00.q_proj");
        (q.dtype, q.group, q.bits, q.blob) = (1, 0, 0, vec![0; 2 * 32 * 48]);
    });
    assert_eq!(tensor_error(&built.bytes), (2, "dtype"));
    // cond_v transposed keeps its byte size but not its shape.
    let built = v3_with(|s| spec_at(s, "layer01.cond_v").shape = vec![8, 48]);
    assert_eq!(
        tensor_error(&built.bytes),
        (position(&built.names, "layer01.cond_v") as u32, "shape[0]")
    );
    // An FP32 norm is accepted: float tensors are read through float_values.
    let built = v3_with(|s| {
        let n = spec_at(s, "final_norm");
        (n.dtype, n.blob) = (2, 1.5f32.to_le_bytes().repeat(48));
    });
    let c = V3Container::parse(&built.bytes).unwrap();
    assert_eq!(c.final_norm.to_f32_vec(), vec![1.5; 48]);
}

#[test]
fn a_cq_row_that_does_not_pack_into_whole_bytes_is_refused() {
    // 44 columns in groups of 4 at 3 bits: 132 bits per row.
    let g = V3 { d_model: 44, group: 4, widths: vec![3], heads: vec![], ..V3::tiny() };
    assert_eq!(
        cact::parse(&g.build().bytes).unwrap_err(),
        Error::BadTensor {
            index: 0,
            field: "group",
            reason: "packed rows are not a whole number of bytes"
        }
    );
}

#[test]
fn cq_tensors_must_share_the_group_the_header_codebooks_were_scaled_for() {
    let built = v3_with(|s| {
        let k = spec_at(s, "layer00.k_proj");
        k.group = 32;
        k.blob = vec![0; cq_bytes(16, 48, 32, 4)];
    });
    assert_eq!(tensor_error(&built.bytes), (3, "group"));
}

#[test]
fn a_walsh_permutation_that_repeats_or_leaves_the_range_is_refused() {
    for bad in [3.0f32, 64.0, -1.0, 0.5, f32::NAN] {
        let built =
            v3_with(|s| spec_at(s, "hada_p2").blob[4..8].copy_from_slice(&bad.to_le_bytes()));
        let index = position(&built.names, "hada_p2") as u32;
        assert_eq!(
            cact::parse(&built.bytes).unwrap_err(),
            Error::BadTensor { index, field: "data", reason: "not a permutation of 0..hada_n" }
        );
    }
}

#[test]
fn heads_manifest_codes_must_be_known_increasing_and_match_the_records() {
    let mut g = V3::tiny();
    g.heads = vec![Head { code: 1, k: 2, q: 2, out: 8 }, Head { code: 2, k: 2, q: 2, out: 1 }];
    let built = g.build();
    let manifest = position(&built.names, "heads.manifest");
    let at = built.blobs[manifest].0;
    for codes in [
        [0x4000u16, 0x3c00],
        [0x3c00, 0x3c00],
        [0x3c00, 0x4400],
        [0x3c00, 0x3c01],
        [0x3c00, 0x4200],
    ] {
        let mut m = built.bytes.clone();
        m[at..at + 2].copy_from_slice(&codes[0].to_le_bytes());
        m[at + 2..at + 4].copy_from_slice(&codes[1].to_le_bytes());
        assert_eq!(tensor_error(&m), (manifest as u32, "data"), "codes {codes:x?}");
    }
}

#[test]
fn tokenizer_framing_errors_are_refused_as_bad_tokenizer() {
    let built = V3::tiny().build();
    let (at, len) = *built.blobs.last().unwrap();
    // The last piece claims more bytes than the blob has.
    let mut m = built.bytes.clone();
    m[at + len - 4..at + len - 2].copy_from_slice(&9u16.to_le_bytes());
    assert!(matches!(
        cact::parse(&m).unwrap_err(),
        Error::BadTokenizer { reason: "piece surface runs past the end", .. }
    ));
    // More pieces than the model's vocabulary.
    let mut m = built.bytes.clone();
    set_u32(&mut m, at, 41);
    assert!(matches!(cact::parse(&m).unwrap_err(), Error::BadTokenizer { offset: 0, .. }));
    // A blob with bytes after its last piece.
    let built = v3_with(|s| s.last_mut().unwrap().blob.push(0));
    assert!(matches!(
        cact::parse(&built.bytes).unwrap_err(),
        Error::BadTokenizer { reason: "trailing bytes after the last piece", .. }
    ));
    // No RAW record at the end.
    let built = v3_with(|s| {
        let t = s.last_mut().unwrap();
        (t.dtype, t.shape, t.blob) = (1, vec![2], vec![0; 4]);
    });
    let last = built.names.len() as u32 - 1;
    assert_eq!(tensor_error(&built.bytes), (last, "dtype"));
}

#[test]
fn truncating_builder_containers_anywhere_names_the_section_or_the_first_cut_tensor() {
    assert_truncations_refused(&V3::tiny().build().bytes, "v3 tiny");
    assert_truncations_refused(&V2::tiny().build().bytes, "v2 tiny");
}

#[test]
fn random_corruption_of_builder_containers_is_answered_without_panicking() {
    let mut g = V3::tiny();
    g.widths = vec![1, 2, 3, 4, 5];
    g.heads = vec![Head { code: 1, k: 2, q: 3, out: 8 }, Head { code: 3, k: 1, q: 2, out: 3 }];
    for (seed, bytes) in [(1u64, g.build().bytes), (2, V2::tiny().build().bytes)] {
        let (ok, refused) = fuzz(&bytes, seed, 20_000);
        assert!(ok > 0 && refused > 0, "seed {seed}: {ok} parsed, {refused} refused");
    }
}
