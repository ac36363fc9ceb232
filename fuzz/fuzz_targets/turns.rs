//! Conversation rendering: any earlier turns (user, assistant, tool; caller-supplied history
//! is untrusted), a query, tool JSON and a system prompt. The control-token invariant: the
//! marker ids of the encoded prompt are exactly the markers the template wrote (counted in
//! its own text, outside the caller's ranges), and no special id (`<pad>`, `</s>`, `<s>`,
//! `<unk>`) follows the opening BOS.
#![no_main]
use libfuzzer_sys::fuzz_target;
use needle_web::prompt::{self, Role, Turn};
use needle_web::tokenizer::PieceKind;
use needle_web::{context, json};

#[path = "common/mod.rs"]
mod common;

const CAPACITY: usize = 512;

fuzz_target!(|data: &[u8]| {
    // Parts: system, tools, query, then earlier turns, each led by its role byte.
    let parts = common::split(data, 10);
    let Ok(texts) = parts.iter().map(|p| std::str::from_utf8(p)).collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    let system = (!texts[0].is_empty()).then_some(texts[0]);
    let tools = if texts[1].trim().is_empty() {
        None
    } else {
        json::parse(texts[1]).ok().map(prompt::flat_tools)
    };
    let query = texts[2];
    let turns: Vec<Turn> = texts[3..]
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| {
            let role = [Role::User, Role::Assistant, Role::Tool][usize::from(t.as_bytes()[0] % 3)];
            Turn { role, text: &t[t.chars().next().map_or(0, char::len_utf8)..] }
        })
        .collect();
    let tok = common::tokenizer();
    let verbatim = turns.iter().map(|t| t.text).chain([query, system.unwrap_or("")]);
    if context::check_request(tok, CAPACITY, verbatim, texts[1]).is_err() {
        return;
    }
    let Ok(rendered) = prompt::render_conversation(&turns, query, tools.as_ref(), system) else {
        return;
    };
    let spans = rendered.spans(false);
    assert_eq!(spans.iter().map(|s| s.text).collect::<String>(), rendered.text);
    let Ok(ids) = context::encode_prompt(tok, &rendered, false, CAPACITY) else {
        return;
    };
    // Markers the template wrote: user-defined surfaces in its own spans, longest first at
    // each position, as the encoder cuts them.
    let mut markers: Vec<&str> = (0..tok.vocab_len() as u32)
        .filter_map(|id| {
            tok.piece(id).filter(|(_, k)| *k == PieceKind::UserDefined).map(|(s, _)| s)
        })
        .collect();
    markers.sort_by_key(|m| std::cmp::Reverse(m.len()));
    let mut written = 0;
    for span in spans.iter().filter(|s| s.markers) {
        let mut rest = span.text;
        while !rest.is_empty() {
            match markers.iter().find(|m| rest.starts_with(**m)) {
                Some(m) => {
                    written += 1;
                    rest = &rest[m.len()..];
                }
                None => rest = &rest[rest.chars().next().unwrap().len_utf8()..],
            }
        }
    }
    let marker_ids = ids
        .iter()
        .filter(|&&id| matches!(tok.piece(id), Some((_, PieceKind::UserDefined))))
        .count();
    assert_eq!(marker_ids, written, "caller text produced marker ids: {:?}", rendered.text);
    let special = [tok.pad_id(), tok.eos_id(), tok.bos_id(), tok.unk_id()];
    assert!(
        !ids[1..].iter().any(|id| special.contains(id)),
        "a special id from text: {:?}",
        rendered.text
    );
});
