//! Containers whose tokenizer was written to attack the text layer: caller text never merges
//! into a control or special id, and a piece long enough to loosen the length bound is refused
//! at load, so the work a query costs stays bounded by the session's capacity.
mod container {
    #[allow(dead_code)]
    pub mod builder;
}

use container::builder::{tokenizer_blob_of, V3};
use needle_web::session::{Engine, LoadOptions, Request};
use needle_web::tokenizer::{Tokenizer, MAX_PIECE_BYTES};
use needle_web::Error;

/// `<pad> </s> <s> <unk>`, the letters of the test texts, and normal pieces that spell the
/// specials' surfaces, scored to merge first.
fn spelling_vocabulary() -> Vec<(&'static str, u8, f32)> {
    let mut pieces = vec![
        ("<pad>", 2, 0.0),
        ("</s>", 2, 0.0),
        ("<s>", 2, 0.0),
        ("<unk>", 1, 0.0),
        ("<|im_end|>", 3, 0.0),
    ];
    for c in [
        "h", "e", "l", "o", "w", "r", "d", "a", "b", "\u{2581}", "<", "/", "s", ">", "|", "p", "u",
        "n", "k",
    ] {
        pieces.push((c, 0, -1.0));
    }
    for p in ["</", "</s", "<s", "s>", "<p", "<pa", "<pad", "ad>", "<u", "<un", "<unk", "nk>"] {
        pieces.push((p, 0, 5.0));
    }
    pieces
}

#[test]
fn caller_text_never_merges_into_a_control_or_special_id() {
    let built = V3::tiny().build_with_tokenizer(tokenizer_blob_of(&spelling_vocabulary()));
    let mut engine = Engine::load(&built.bytes, &LoadOptions::default()).unwrap();
    let tok = engine.tokenizer().clone();
    let special = [tok.pad_id(), tok.eos_id(), tok.bos_id(), tok.unk_id()];
    for text in ["hello </s> world", "a<s>b", "<pad><unk>", "</s>", "<s>"] {
        let ids = tok.encode(text);
        assert!(!ids.iter().any(|id| special.contains(id)), "{text:?} -> {ids:?}");
        assert_eq!(tok.decode(&ids), text);
        let mut req = Request::new(text, "");
        req.max_tokens = 1;
        let done = engine.generate(&req, |_| true).unwrap();
        // BOS opens the prompt; nothing after it is special.
        assert_eq!(done.prompt_ids[0], tok.bos_id());
        assert!(
            !done.prompt_ids[1..].iter().any(|id| special.contains(id)),
            "{text:?} -> {:?}",
            done.prompt_ids
        );
    }
    // The chat markers stay markers in template text.
    assert_eq!(tok.encode("<|im_end|>"), [tok.piece_id("<|im_end|>").unwrap()]);
}

#[test]
fn a_piece_longer_than_the_cap_is_refused_at_load_and_the_cap_bounds_the_work() {
    // The attack: one 65,535-byte piece, so the length bound let 50 MB through to the encoder.
    let mut pieces = spelling_vocabulary();
    let huge = "a".repeat(u16::MAX as usize);
    pieces.push((&huge, 0, 0.0));
    let built = V3::tiny().build_with_tokenizer(tokenizer_blob_of(&pieces));
    let t0 = std::time::Instant::now();
    let err =
        Engine::load(&built.bytes, &LoadOptions::default()).err().expect("the huge piece loads");
    assert_eq!(err.code(), "bad_tokenizer", "{err}");
    println!("65,535-byte piece: refused at load in {:?} ({err})", t0.elapsed());

    // At the cap the container loads, and a 50 MB query is refused from its length.
    let longest = "a".repeat(MAX_PIECE_BYTES);
    pieces.pop();
    pieces.push((&longest, 0, 0.0));
    let built = V3::tiny().build_with_tokenizer(tokenizer_blob_of(&pieces));
    let mut engine = Engine::load(&built.bytes, &LoadOptions::default()).unwrap();
    assert_eq!(engine.tokenizer().max_token_bytes(), MAX_PIECE_BYTES);
    let capacity = engine.info().capacity;
    let query = "hello world ".repeat((50 << 20) / 12);
    let t0 = std::time::Instant::now();
    let err = engine.start(&Request::new(&query, "")).unwrap_err();
    assert!(matches!(err, Error::ContextFull { .. }), "{err:?}");
    println!("50 MB query, {MAX_PIECE_BYTES}-byte piece: {err} in {:?}", t0.elapsed());
    assert!(t0.elapsed().as_millis() < 500, "{:?}", t0.elapsed());
    // The most text that passes the length check is capacity x the cap.
    let most = &query[..(capacity - 2) * MAX_PIECE_BYTES];
    let t0 = std::time::Instant::now();
    let err = engine.start(&Request::new(most, "")).unwrap_err();
    assert!(matches!(err, Error::ContextFull { .. }), "{err:?}");
    println!("{} bytes at the bound: {err} in {:?}", most.len(), t0.elapsed());

    // Straight from the blob too.
    let blob = tokenizer_blob_of(&[
        ("<pad>", 2, 0.0),
        ("</s>", 2, 0.0),
        ("<s>", 2, 0.0),
        ("<unk>", 1, 0.0),
        (&huge, 0, 0.0),
    ]);
    assert!(matches!(Tokenizer::from_blob(&blob), Err(Error::BadTokenizer { .. })));
}

#[test]
fn a_tokenizer_whose_eos_is_its_padding_is_refused() {
    // The stop token the model emits runs through the heads, which refuse padding.
    let mut blob = tokenizer_blob_of(&spelling_vocabulary());
    blob[8..12].copy_from_slice(&0u32.to_le_bytes());
    let err = Tokenizer::from_blob(&blob).err().expect("eos = pad loads");
    assert_eq!(err.code(), "bad_tokenizer", "{err}");
}
