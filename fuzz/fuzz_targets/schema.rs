//! The schema compiler and matcher (constrained decoding): any tool JSON compiles or gives a
//! typed error; then the bytes choose among the tokens the mask allows, and every choice is
//! accepted, with the arguments held to the whole schema or not. A turn the constraint lets end
//! (chosen, or closed as a required call is) is one the response parser reads whole: no parse
//! error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use needle_web::constrained::{Constraint, TokenTable};
use needle_web::prompt::IM_END;
use needle_web::{json, response};

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
    // The first choice byte's low bit asks for a call, so the closing is reached too; the next
    // bit holds the arguments to the whole schema (structured output).
    let (flags, choices) = parts[2].split_first().map_or((0, &[][..]), |(b, rest)| (*b, rest));
    let require = flags & 1 == 1;
    if require {
        constraint.require_call();
    }
    if flags & 2 == 2 && constraint.full_schema(&tools).is_err() {
        return;
    }
    let tok = common::tokenizer();
    // The engine's stops: EOS and the turn's end marker.
    let stops: Vec<u32> =
        [Some(tok.eos_id()), tok.piece_id(IM_END)].into_iter().flatten().collect();
    let table = TokenTable::new(tok, tok.vocab_len(), &stops);
    let mut logits = vec![0.0f32; tok.vocab_len()];
    let mut ids = Vec::new();
    let mut ended = false;
    for &choice in choices.iter().take(16) {
        logits.fill(0.0);
        constraint.mask(&table, &mut logits);
        let allowed: Vec<u32> =
            (0..logits.len() as u32).filter(|&i| logits[i as usize] == 0.0).collect();
        assert!(!allowed.is_empty(), "the mask leaves at least the stop token");
        let id = allowed[choice as usize % allowed.len()];
        if table.is_stop(id) {
            ended = constraint.can_stop();
            break;
        }
        constraint.accept(&table, id);
        ids.push(id);
    }
    if !ended && require {
        if let Some(closing) = constraint.closing(tok, &table) {
            for id in closing {
                constraint.accept(&table, id);
                ids.push(id);
            }
            assert!(constraint.can_stop(), "a closing ends the turn");
            ended = true;
        }
    }
    if ended {
        let text = tok.decode(&ids);
        let parsed = response::parse(&text);
        assert_eq!(parsed.parse_error, None, "{text:?}");
        // Without tools the refusal is all a required call leaves.
        let tools = matches!(&tools, json::Value::Array(list) if !list.is_empty());
        assert!(
            !(require && tools) || !parsed.function_calls.is_empty(),
            "a required call: {text:?}"
        );
    }
});
