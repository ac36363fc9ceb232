//! The schema compiler and matcher (constrained decoding): any tool JSON compiles or gives a
//! typed error; then the bytes choose among the tokens the mask allows, and every choice is
//! accepted.
#![no_main]
use libfuzzer_sys::fuzz_target;
use needle_web::constrained::{Constraint, TokenTable};
use needle_web::json;

#[path = "common/mod.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let parts = common::split(data, 3);
    let (Ok(tools), Ok(query)) = (std::str::from_utf8(parts[0]), std::str::from_utf8(parts[1]))
    else {
        return;
    };
    let Ok(tools) = json::parse(tools) else { return };
    let extract = (!query.is_empty()).then_some(query);
    let Ok(mut constraint) = Constraint::new(&tools, extract) else { return };
    let tok = common::tokenizer();
    let stops = [tok.eos_id()];
    let table = TokenTable::new(tok, tok.vocab_len(), &stops);
    let mut logits = vec![0.0f32; tok.vocab_len()];
    for &choice in parts[2].iter().take(16) {
        logits.fill(0.0);
        constraint.mask(&table, &mut logits);
        let allowed: Vec<u32> =
            (0..logits.len() as u32).filter(|&i| logits[i as usize] == 0.0).collect();
        assert!(!allowed.is_empty(), "the mask leaves at least the stop token");
        let id = allowed[choice as usize % allowed.len()];
        if table.is_stop(id) {
            break;
        }
        constraint.accept(&table, id);
    }
});
