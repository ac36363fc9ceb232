//! Unit tests on hand-built blobs; the corpus tests against upstream's output live in
//! `tests/text.rs`.
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use alloc::{format, vec};

use super::*;
use crate::Error;

/// Serialises pieces `(surface, score, type)` into the RAW blob layout.
fn blob(pieces: &[(&str, f32, u8)], dummy: u8, byte_fallback: u8) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [pieces.len() as u32, 0, 1, 2, 3] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&[dummy, byte_fallback, 0, 0]);
    for &(s, score, t) in pieces {
        out.extend_from_slice(&score.to_le_bytes());
        out.push(t);
        out.extend_from_slice(&(s.len() as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out
}

/// Specials, two markers, all 256 byte pieces, then `normal` (ids from 262 on).
fn vocab_with(normal: &[(&str, f32)], dummy: u8, byte_fallback: u8) -> (Vec<u8>, Vec<String>) {
    let mut owned: Vec<(String, f32, u8)> = vec![
        ("<pad>".into(), 0.0, 2),
        ("</s>".into(), 0.0, 2),
        ("<s>".into(), 0.0, 2),
        ("<unk>".into(), 0.0, 1),
        ("<|im_start|>".into(), 0.0, 3),
        ("<|im_end|>".into(), 0.0, 3),
    ];
    for b in 0..=255u8 {
        owned.push((format!("<0x{b:02X}>"), 0.0, 4));
    }
    for &(s, score) in normal {
        owned.push((s.to_string(), score, 0));
    }
    let refs: Vec<(&str, f32, u8)> = owned.iter().map(|(s, f, t)| (s.as_str(), *f, *t)).collect();
    (blob(&refs, dummy, byte_fallback), owned.into_iter().map(|p| p.0).collect())
}

const FIRST_NORMAL: u32 = 262;

/// Upstream's quadratic reference merge, kept here to check the heap version against it.
fn reference_bpe(tok: &Tokenizer, seg: &str) -> Vec<String> {
    let mut syms: Vec<String> = seg.chars().map(|c| c.to_string()).collect();
    while syms.len() > 1 {
        let mut best: Option<(f32, usize)> = None;
        for j in 0..syms.len() - 1 {
            let pair = format!("{}{}", syms[j], syms[j + 1]);
            if let Some(id) = tok.piece_id(&pair) {
                let score = tok.vocab.pieces[id as usize].score;
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, j));
                }
            }
        }
        let Some((_, j)) = best else { break };
        let right = syms.remove(j + 1);
        syms[j].push_str(&right);
    }
    syms
}

#[test]
fn merges_follow_score_order() {
    let (raw, _) =
        vocab_with(&[("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -3.0), ("bc", -2.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    // "bc" outranks "ab", and "a"+"bc" is not a piece.
    let bc = tok.piece_id("bc").unwrap();
    assert_eq!(tok.encode("abc"), [tok.piece_id("a").unwrap(), bc]);
}

#[test]
fn equal_scores_merge_the_leftmost_pair_first() {
    let (raw, _) = vocab_with(&[("a", -1.0), ("aa", -2.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let (a, aa) = (tok.piece_id("a").unwrap(), tok.piece_id("aa").unwrap());
    assert_eq!(tok.encode("aaa"), [aa, a]);
    assert_eq!(tok.encode("aaaaa"), [aa, aa, a]);
}

#[test]
fn the_heap_merge_equals_the_quadratic_reference_on_random_text() {
    // A small alphabet and many overlapping pieces with deliberately repeated scores.
    let pieces = [
        ("a", -1.0),
        ("b", -1.0),
        ("c", -1.0),
        ("▁", -1.0),
        ("ab", -2.0),
        ("ba", -2.0),
        ("aa", -2.0),
        ("bc", -3.0),
        ("cb", -2.0),
        ("aab", -2.0),
        ("aba", -5.0),
        ("bab", -2.5),
        ("▁a", -2.0),
        ("▁ab", -3.0),
        ("abab", -1.5),
        ("cc", -2.0),
        ("ccc", -2.0),
        ("cccc", -6.0),
        ("aaaa", -2.0),
    ];
    let (raw, _) = vocab_with(&pieces, 1, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let alphabet = ['a', 'b', 'c', ' ', 'é'];
    let mut state: u64 = 0x1234_5678;
    for round in 0..3000 {
        let len = 1 + round % 40;
        let text: String = (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                alphabet[(state >> 33) as usize % alphabet.len()]
            })
            .collect();
        let escaped: String = core::iter::once('▁')
            .chain(text.chars().map(|c| if c == ' ' { '▁' } else { c }))
            .collect();
        let mut want = Vec::new();
        for sym in reference_bpe(&tok, &escaped) {
            match tok.piece_id(&sym) {
                Some(id) => want.push(id),
                None => want.extend(sym.bytes().map(|b| tok.byte_ids[b as usize].unwrap())),
            }
        }
        assert_eq!(tok.encode(&text), want, "{text:?}");
    }
}

#[test]
fn markers_split_the_text_wherever_they_appear() {
    let (raw, _) = vocab_with(&[("h", -1.0), ("i", -1.0), ("hi", -1.5), ("▁", -1.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let hi = tok.piece_id("hi").unwrap();
    assert_eq!(tok.encode("hi<|im_end|>hi<|im_start|>"), [hi, 5, hi, 4]);
    // Half a marker is plain text (byte fallback for '<', '|', ...).
    let partial = tok.encode("<|im_end");
    assert!(!partial.contains(&5));
    assert_eq!(tok.decode(&partial), "<|im_end");
}

#[test]
fn a_longer_marker_wins_over_its_prefix() {
    let pieces = [
        ("<pad>", 0.0, 2),
        ("</s>", 0.0, 2),
        ("<s>", 0.0, 2),
        ("<unk>", 0.0, 1),
        ("<a>", 0.0, 3),
        ("<a><b>", 0.0, 3),
    ];
    let tok = Tokenizer::from_blob(&blob(&pieces, 0, 0)).unwrap();
    assert_eq!(tok.encode("<a><b><a>"), [5, 4]);
}

#[test]
fn the_dummy_prefix_is_added_and_removed() {
    let (raw, _) =
        vocab_with(&[("▁", -1.0), ("h", -1.0), ("i", -1.0), ("▁h", -1.5), ("▁hi", -1.2)], 1, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let hi = tok.piece_id("▁hi").unwrap();
    assert_eq!(tok.encode("hi hi"), [hi, hi]);
    assert_eq!(tok.decode(&[hi, hi]), "hi hi");
    // A lone "▁" appears before a marker at the start.
    let meta = tok.piece_id("▁").unwrap();
    assert_eq!(
        tok.encode("<|im_start|>hi"),
        [meta, 4, tok.piece_id("h").unwrap(), tok.piece_id("i").unwrap()]
    );
    assert_eq!(tok.decode(&tok.encode("<|im_start|>hi")), "<|im_start|>hi");
    // Only one leading space is the dummy one.
    assert_eq!(tok.decode(&tok.encode("  hi")), "  hi");
}

#[test]
fn without_the_dummy_prefix_leading_spaces_survive() {
    let (raw, _) = vocab_with(&[("▁", -1.0), ("h", -1.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let (meta, h) = (tok.piece_id("▁").unwrap(), tok.piece_id("h").unwrap());
    assert_eq!(tok.encode(" h"), [meta, h]);
    assert_eq!(tok.decode(&[meta, h]), " h");
}

#[test]
fn unknown_characters_fall_back_to_bytes_or_unk() {
    let (raw, _) = vocab_with(&[("a", -1.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    assert_eq!(tok.encode("é"), [6 + 0xC3, 6 + 0xA9]);
    assert_eq!(tok.decode(&tok.encode("aé😀")), "aé😀");
    let (raw, _) = vocab_with(&[("a", -1.0)], 0, 0);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    assert_eq!(tok.encode("aéa"), [FIRST_NORMAL, 3, FIRST_NORMAL]);
    assert_eq!(tok.decode(&tok.encode("aéa")), "aa");
}

#[test]
fn empty_text_encodes_to_nothing() {
    let (raw, _) = vocab_with(&[], 1, 1);
    assert!(Tokenizer::from_blob(&raw).unwrap().encode("").is_empty());
}

#[test]
fn decode_skips_control_unknown_and_out_of_range_ids() {
    let (raw, _) = vocab_with(&[("a", -1.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    assert_eq!(tok.decode(&[0, 1, 2, 3, FIRST_NORMAL, 99_999, 5]), "a<|im_end|>");
}

#[test]
fn invalid_byte_sequences_decode_to_replacement_characters() {
    let (raw, _) = vocab_with(&[], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let bytes = |bs: &[u8]| -> Vec<u32> { bs.iter().map(|&b| 6 + b as u32).collect() };
    assert_eq!(tok.decode(&bytes(&[0xe2, 0x82])), "\u{fffd}");
    assert_eq!(tok.decode(&bytes(&[0xe2, 0x82, 0x41])), "\u{fffd}A");
    assert_eq!(tok.decode(&bytes(&[0xf0, 0x80, 0x80])), "\u{fffd}\u{fffd}\u{fffd}");
    assert_eq!(tok.decode(&bytes(&[0xff, 0xe2, 0x82, 0xac])), "\u{fffd}€");
    // A control token between the bytes of one character does not break it.
    let mut ids = bytes(&[0xe2, 0x82]);
    ids.push(2);
    ids.extend(bytes(&[0xac]));
    assert_eq!(tok.decode(&ids), "€");
}

#[test]
fn streaming_never_splits_a_character_and_matches_whole_decoding() {
    let (raw, _) = vocab_with(&[("▁", -1.0), ("a", -1.0)], 1, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    let streams: [&[u32]; 4] = [
        &[FIRST_NORMAL, 6 + 0xe2, 6 + 0x82, 6 + 0xac, FIRST_NORMAL + 1],
        &[6 + 0xf0, 6 + 0x9f, 2, 6 + 0x98, 6 + 0x80, 6 + 0x20, FIRST_NORMAL],
        &[6 + 0xe2, 6 + 0x41, 6 + 0xe2],
        &[6 + 0x20, 6 + 0x20, FIRST_NORMAL + 1],
    ];
    for ids in streams {
        let mut decoder = IncrementalDecoder::new(&tok);
        let mut out = String::new();
        for &id in ids {
            let before = out.len();
            decoder.push(&tok, id, &mut out);
            assert!(!out[before..].contains('\u{fffd}') || ids == streams[2]);
        }
        decoder.finish(&mut out);
        assert_eq!(out, tok.decode(ids), "{ids:?}");
    }
    // Mid-character, nothing is emitted yet.
    let mut decoder = IncrementalDecoder::new(&tok);
    let mut out = String::new();
    decoder.push(&tok, 6 + 0xe2, &mut out);
    decoder.push(&tok, 6 + 0x82, &mut out);
    assert_eq!(out, "");
    decoder.push(&tok, 6 + 0xac, &mut out);
    assert_eq!(out, "€");
}

#[test]
fn repeated_surfaces_map_to_the_last_id() {
    let (raw, _) = vocab_with(&[("a", -1.0), ("a", -1.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    assert_eq!(tok.encode("a"), [FIRST_NORMAL + 1]);
}

#[test]
fn long_inputs_encode_in_near_linear_time() {
    let (raw, _) = vocab_with(&[("a", -1.0), ("aa", -2.0), ("aaaa", -3.0), ("▁", -1.0)], 0, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    // 200k characters in one segment: the quadratic reference would need ~10^10 steps.
    let ids = tok.encode(&"a".repeat(200_000));
    assert_eq!(ids.len(), 50_000);
}

#[test]
fn accessors_report_the_header() {
    let (raw, names) = vocab_with(&[("a", -1.0)], 1, 1);
    let tok = Tokenizer::from_blob(&raw).unwrap();
    assert_eq!((tok.pad_id(), tok.eos_id(), tok.bos_id(), tok.unk_id()), (0, 1, 2, 3));
    assert_eq!(tok.vocab_len(), names.len());
    assert!(tok.add_dummy_prefix() && tok.byte_fallback());
    assert_eq!(tok.piece(5), Some(("<|im_end|>", PieceKind::UserDefined)));
    assert_eq!(tok.piece(6 + 0x41), Some(("<0x41>", PieceKind::Byte(0x41))));
    assert_eq!(tok.piece(10_000), None);
}

fn refused(raw: &[u8]) -> &'static str {
    match Tokenizer::from_blob(raw) {
        Err(Error::BadTokenizer { reason, .. }) => reason,
        Err(other) => panic!("wrong error {other:?}"),
        Ok(_) => panic!("forged blob accepted"),
    }
}

#[test]
fn truncated_blobs_are_refused() {
    let (raw, _) = vocab_with(&[("abc", -1.0)], 1, 1);
    for cut in [0, 10, 23, 24, 30, raw.len() - 1] {
        refused(&raw[..cut]);
    }
}

#[test]
fn forged_blobs_are_refused() {
    let ok: &[(&str, f32, u8)] =
        &[("<pad>", 0.0, 2), ("</s>", 0.0, 2), ("<s>", 0.0, 2), ("<unk>", 0.0, 1)];
    assert!(Tokenizer::from_blob(&blob(ok, 0, 0)).is_ok());
    let with = |extra: (&str, f32, u8)| {
        let mut p = ok.to_vec();
        p.push(extra);
        blob(&p, 0, 0)
    };
    assert_eq!(refused(&with(("x", f32::NAN, 0))), "piece score is NaN");
    assert_eq!(refused(&with(("", 0.0, 3))), "empty piece");
    assert_eq!(refused(&with(("x", 0.0, 9))), "unknown piece type");
    assert_eq!(refused(&with(("<0x4G>", 0.0, 4))), "byte piece is not <0xHH>");
    assert_eq!(refused(&with(("<0x+4>", 0.0, 4))), "byte piece is not <0xHH>");
    assert_eq!(refused(&with(("<0x041>", 0.0, 4))), "byte piece is not <0xHH>");

    let mut count = blob(ok, 0, 0);
    count[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(refused(&count), "piece count exceeds what the blob can hold");
    let mut zero = blob(ok, 0, 0);
    zero[..4].copy_from_slice(&0u32.to_le_bytes());
    refused(&zero);
    let mut special = blob(ok, 0, 0);
    special[16..20].copy_from_slice(&4u32.to_le_bytes());
    assert_eq!(refused(&special), "special token id outside the vocabulary");
    let mut flag = blob(ok, 0, 0);
    flag[20] = 2;
    assert_eq!(refused(&flag), "flag byte is neither 0 nor 1");
    let mut utf8 = with(("xy", 0.0, 0));
    let last = utf8.len() - 1;
    utf8[last] = 0xff;
    assert_eq!(refused(&utf8), "piece surface is not UTF-8");
    let mut long = with(("xy", 0.0, 0));
    let at = long.len() - 4;
    long[at..at + 2].copy_from_slice(&500u16.to_le_bytes());
    assert_eq!(refused(&long), "piece surface runs past the end");
    let mut trailing = blob(ok, 0, 0);
    trailing.push(0);
    assert_eq!(refused(&trailing), "trailing bytes after the last piece");
}

#[test]
fn a_marker_encodes_to_the_last_piece_with_its_surface() {
    let pieces = [
        ("<pad>", 0.0, 2),
        ("</s>", 0.0, 2),
        ("<s>", 0.0, 2),
        ("<unk>", 0.0, 1),
        ("<m>", 0.0, 3),
        ("<m>", 0.0, 3),
        ("x", 0.0, 0),
        ("<m>", 0.0, 0),
    ];
    let tok = Tokenizer::from_blob(&blob(&pieces, 0, 0)).unwrap();
    assert_eq!(tok.encode("x<m>x<m>"), [6, 7, 6, 7]);
}
