//! Value search through the session: each argument value it writes is at least as likely as the
//! one greedy decoding writes from the same point (under the constrained distribution: each
//! token's probability renormalised over what the constraint allows), it writes only what the
//! constraint allows, and it refuses sampling.
mod common;

use common::cases;
use needle_web::constrained::{Constraint, TokenTable};
use needle_web::json;
use needle_web::session::{Completion, Engine, LoadOptions, Request, StopReason};
use needle_web::Error;

const TOOLS: &str = r#"[{"name":"create_note","description":"Writes a note.","parameters":{"type":"object","properties":{"title":{"type":"string"},"text":{"type":"string"},"pinned":{"type":"boolean"}},"required":["text"]}},{"name":"set_timer","description":"Starts a timer.","parameters":{"type":"object","properties":{"minutes":{"type":"integer"},"label":{"type":"string","enum":["tea","oven","nap"]}},"required":["minutes"]}}]"#;

const QUERIES: [&str; 4] = [
    "note that the plumber comes Tuesday at noon",
    "start a tea timer for 4 minutes and write down buy oat milk",
    "Remember: Sarah's flight lands at 6:40 PM",
    "pin a note called groceries with eggs, rice and basil",
];

/// A constraint over `TOOLS` copying from `query` (extractive), and its token table.
fn walker(engine: &Engine, query: &str) -> (TokenTable, Constraint) {
    let stops = [engine.tokenizer().eos_id()];
    let table = TokenTable::new(engine.tokenizer(), engine.info().logits_len, &stops);
    (table, Constraint::new(&json::parse(TOOLS).unwrap(), Some(query)).unwrap())
}

/// Token index range `[start, end)` of the first argument value of `tokens`: from the first
/// token boundary inside a value to the token that leaves it.
fn first_value(engine: &Engine, tokens: &[u32], query: &str) -> Option<(usize, usize)> {
    let (table, mut constraint) = walker(engine, query);
    let mut start = None;
    for (i, &id) in tokens.iter().enumerate() {
        if start.is_none() && constraint.in_argument_value() {
            start = Some(i);
        }
        constraint.accept(&table, id);
        if let Some(s) = start {
            if !constraint.in_argument_value() {
                return Some((s, i + 1));
            }
        }
    }
    None
}

/// The log-probability of `tokens[range]` after the prompt and the tokens before them under the
/// constrained distribution: per token `ln p - ln m`, `p` its full-softmax probability and `m`
/// that of every token the constraint allows there.
fn score(engine: &mut Engine, done: &Completion, range: (usize, usize), query: &str) -> f64 {
    let ids: Vec<u32> = done.prompt_ids.iter().chain(&done.tokens[..range.1]).copied().collect();
    let width = engine.info().logits_len;
    let rows = engine.logits_for(&ids).unwrap();
    let (table, mut constraint) = walker(engine, query);
    let lse = |row: &[f32]| {
        let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
        max + row.iter().map(|&v| (v as f64 - max).exp()).sum::<f64>().ln()
    };
    let mut total = 0.0;
    for (t, &id) in done.tokens[..range.1].iter().enumerate() {
        if t >= range.0 {
            let row =
                &rows[(done.prompt_ids.len() + t - 1) * width..(done.prompt_ids.len() + t) * width];
            let mut masked = row.to_vec();
            constraint.mask(&table, &mut masked);
            total += row[id as usize] as f64 - lse(&masked);
        }
        constraint.accept(&table, id);
    }
    total
}

#[test]
fn each_searched_value_is_at_least_as_likely_as_the_greedy_one() {
    let (mut compared, mut better) = (0, 0);
    for case in cases("v3").iter().chain(cases("v2").iter()) {
        let mut engine = Engine::load(&case.bytes, &LoadOptions::default()).unwrap();
        for query in QUERIES {
            let mut req = Request::new(query, TOOLS);
            req.max_tokens = 120;
            req.extractive = true;
            let greedy = engine.generate(&req, |_| true).unwrap();
            req.value_search = true;
            let searched = engine.generate(&req, |_| true).unwrap();
            if searched.stop_reason == StopReason::ImEnd || searched.stop_reason == StopReason::Eos
            {
                assert!(
                    searched.response.parse_error.is_none(),
                    "{} {query:?}: {:?}",
                    case.name,
                    searched.response.text
                );
            }
            let (Some(g), Some(s)) = (
                first_value(&engine, &greedy.tokens, query),
                first_value(&engine, &searched.tokens, query),
            ) else {
                continue;
            };
            // Up to the first value both decode greedily.
            assert_eq!(g.0, s.0, "{} {query:?}", case.name);
            assert_eq!(greedy.tokens[..g.0], searched.tokens[..s.0], "{} {query:?}", case.name);
            let (lg, ls) =
                (score(&mut engine, &greedy, g, query), score(&mut engine, &searched, s, query));
            assert!(ls >= lg - 1e-3, "{} {query:?}: searched value {ls} < greedy {lg}", case.name);
            compared += 1;
            better += (ls > lg + 1e-3) as usize;
        }
    }
    assert!(compared >= 8, "only {compared} turns wrote a value to compare");
    assert!(better > 0, "the search never beat greedy: the comparison is vacuous");
}

#[test]
fn value_search_needs_greedy_decoding() {
    let case = &cases("v3")[0];
    let mut engine = Engine::load(&case.bytes, &LoadOptions::default()).unwrap();
    let mut req = Request::new(QUERIES[0], TOOLS);
    req.value_search = true;
    req.temperature = 0.7;
    assert!(matches!(engine.start(&req), Err(Error::InvalidArgument { name: "value_search", .. })));
}
