//! Prompt rendering and encoding: any query, tool JSON and system prompt render, fit or are
//! refused from their lengths, and caller text never yields more marker ids than the template.
#![no_main]
use libfuzzer_sys::fuzz_target;
use needle_web::tokenizer::PieceKind;
use needle_web::{context, json, prompt};

#[path = "common/mod.rs"]
mod common;

const CAPACITY: usize = 256;

fuzz_target!(|data: &[u8]| {
    let parts = common::split(data, 3);
    let (Ok(query), Ok(tools), Ok(system)) = (
        std::str::from_utf8(parts[0]),
        std::str::from_utf8(parts[1]),
        std::str::from_utf8(parts[2]),
    ) else {
        return;
    };
    let system = (!system.is_empty()).then_some(system);
    let tok = common::tokenizer();
    if context::check_request(tok, CAPACITY, [query, system.unwrap_or("")], tools).is_err() {
        return;
    }
    let tools = if tools.trim().is_empty() {
        None
    } else {
        json::parse(tools).ok().map(prompt::flat_tools)
    };
    let Ok(rendered) = prompt::render_conversation(&[], query, tools.as_ref(), system) else {
        return;
    };
    assert_eq!(rendered.spans(false).iter().map(|s| s.text).collect::<String>(), rendered.text);
    let markers = |ids: &[u32]| {
        ids.iter().filter(|&&id| matches!(tok.piece(id), Some((_, PieceKind::UserDefined)))).count()
    };
    let Ok(ids) = context::encode_prompt(tok, &rendered, false, CAPACITY) else { return };
    assert!(ids.len() < CAPACITY);
    // The template's own markers: the same render around marker-free caller text.
    let one_tool = json::Value::Array(vec![json::Value::Null]);
    let plain =
        prompt::render_conversation(&[], "q", Some(&one_tool), system.map(|_| "s")).unwrap();
    let template = context::encode_prompt(tok, &plain, false, CAPACITY).unwrap();
    if system.is_some() || tools.as_ref().is_some_and(json::Value::is_truthy) {
        assert!(markers(&ids) <= markers(&template), "caller text produced marker ids");
    } else {
        assert_eq!(markers(&ids), 0, "a bare query produced marker ids");
    }
});
