use alloc::vec::Vec;

use super::matcher::Matcher;
use super::schema::Grammar;
use crate::prompt::{IM_END, THINK_START};
use crate::{json, response};

const TOOLS: &str = r#"[
 {"name":"control_lights","parameters":{"type":"object","properties":{
   "room":{"type":"string","enum":["kitchen","living_room","bedroom"]},
   "action":{"type":"string","enum":["on","off","dim"]},
   "brightness":{"type":"integer"},
   "color":{"type":"string","minLength":1,"maxLength":12}},"required":["room","action"]}},
 {"name":"log_weight","parameters":{"properties":{"kg":{"type":"number"},"note":{},"public":{"type":"boolean"}},"required":["kg"]}},
 {"name":"log","description":"no parameters declared"},
 {"name":"pause","parameters":{"type":"object","properties":{}}}
]"#;

/// A request the extractive tests copy from: mixed case, an escaped quote, non-ASCII.
const REQUEST: &str = "Kitchen lights on, colour Warm \"Amber\" glow — then log 70 kg";

fn extractive_grammar() -> Grammar {
    Grammar::new(&json::parse(TOOLS).unwrap(), Some(REQUEST)).unwrap()
}

fn grammar() -> Grammar {
    Grammar::new(&json::parse(TOOLS).unwrap(), None).unwrap()
}

/// Bytes of `text` the matcher accepts before refusing one, and whether it may stop after all.
fn run(g: &Grammar, text: &str) -> (usize, bool) {
    let mut m = Matcher::default();
    let accepted = text.bytes().take_while(|&b| m.advance(g, b)).count();
    (accepted, accepted == text.len() && m.can_stop())
}

fn accepts(g: &Grammar, text: &str) -> bool {
    run(g, text).1
}

#[test]
fn completions_in_the_trained_format_are_accepted() {
    let g = grammar();
    for text in [
        "<tool_call>[]</tool_call>",
        r#"<tool_call>[{"name":"control_lights","arguments":{"room":"bedroom","action":"dim","brightness":35}}]</tool_call>"#,
        r#"<tool_call>[{"name":"control_lights","arguments":{"action":"on","room":"kitchen","color":"warm \"white\""}},{"name":"log_weight","arguments":{"kg":78.4,"public":false,"note":[1,{"a":null}]}}]</tool_call>"#,
        "<think>\nthe user wants the lights off </think\n still thinking\n</think>\n<tool_call>[{\"name\":\"pause\",\"arguments\":{}}]</tool_call>",
        r#" <tool_call> [ { "name" : "log" , "arguments" : { "anything" : [ 1 , 2 ] } } ] </tool_call>"#,
        r#"<tool_call>[{"name":"log_weight","arguments":{"kg":-0.5e3}}]</tool_call>"#,
    ] {
        assert_eq!(run(&g, text), (text.len(), true), "{text}");
    }
}

#[test]
fn completions_outside_the_schemas_are_refused_where_they_leave_them() {
    let g = grammar();
    for (text, refused_at) in [
        ("Sure! <tool_call>[]</tool_call>", "S"),
        (r#"<tool_call>[{"name":"control_fan","arguments":{}}]</tool_call>"#, "f"),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"garage"}}]</tool_call>"#,
            "g",
        ),
        (r#"<tool_call>[{"name":"control_lights","arguments":{"room":"study"}}]</tool_call>"#, "s"),
        (r#"<tool_call>[{"name":"control_lights","arguments":{"speed":"high"}}]</tool_call>"#, "s"),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","room":"bedroom"}}]</tool_call>"#,
            "r",
        ),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen"}}]</tool_call>"#,
            "}",
        ),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","action":"on","brightness":"35"}}]</tool_call>"#,
            "\"",
        ),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","action":"on","brightness":3.5}}]</tool_call>"#,
            ".",
        ),
        (
            r#"<tool_call>[{"name":"log_weight","arguments":{"kg":70,"public":"yes"}}]</tool_call>"#,
            "\"",
        ),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","action":"on","color":""}}]</tool_call>"#,
            "\"}",
        ),
        (
            r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","action":"on","color":"warm white light"}}]</tool_call>"#,
            "ight",
        ),
        (r#"<tool_call>[{"arguments":{},"name":"pause"}]</tool_call>"#, "a"),
        (r#"<tool_call>[{"name":"pause","arguments":{"x":1}}]</tool_call>"#, "\""),
        ("<tool_call>[]</tool_call>more", "m"),
        ("<tool_call>[],[]</tool_call>", ","),
    ] {
        let (accepted, _) = run(&g, text);
        assert!(accepted < text.len(), "accepted all of {text}");
        assert_eq!(&text[accepted..accepted + refused_at.len()], refused_at, "{text}");
    }
}

#[test]
fn a_runaway_string_value_must_close_at_its_max_length() {
    // "save save save ...": once the value is 12 characters long only its closing quote fits.
    let g = grammar();
    let mut m = Matcher::default();
    let head = r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","action":"on","color":""#;
    assert!(head.bytes().all(|b| m.advance(&g, b)));
    let written = "save ".bytes().cycle().take(40).take_while(|&b| m.advance(&g, b)).count();
    assert_eq!(written, 12);
    let allowed: Vec<u8> = (0..=255u8).filter(|&b| m.clone().advance(&g, b)).collect();
    assert_eq!(allowed, b"\"");
}

#[test]
fn length_bounds_no_string_can_meet_are_ignored() {
    for schema in [
        r#"{"type":"string","minLength":5,"maxLength":2}"#,
        r#"{"type":"string","minLength":-1,"maxLength":1.5}"#,
    ] {
        let tools =
            format!(r#"[{{"name":"tag","parameters":{{"properties":{{"text":{schema}}}}}}}]"#);
        let g = Grammar::new(&json::parse(&tools).unwrap(), None).unwrap();
        for value in ["", "a much longer text than any bound"] {
            let text = format!(
                r#"<tool_call>[{{"name":"tag","arguments":{{"text":"{value}"}}}}]</tool_call>"#
            );
            assert!(accepts(&g, &text), "{schema}: {text}");
        }
    }
}

#[test]
fn extractive_strings_are_pieces_of_the_request_and_other_values_stay_free() {
    let g = extractive_grammar();
    let call = |color: &str| {
        format!(
            r#"<tool_call>[{{"name":"control_lights","arguments":{{"room":"kitchen","action":"on","brightness":35,"color":"{color}"}}}}]</tool_call>"#
        )
    };
    // Case is ignored, escapes match the request's; enums and numbers are not copied.
    for color in [r#"warm \"amber\""#, "Amber", "glow — then"] {
        assert!(accepts(&g, &call(color)), "{color}");
    }
    for (color, refused_at) in [("warm red", "r"), ("amber light", " "), (r"Warm \u0022", "u")] {
        let text = call(color);
        let (accepted, _) = run(&g, &text);
        let at = text.find(color).unwrap() + color.rfind(refused_at).unwrap();
        assert_eq!(accepted, at, "{color}");
    }
    // Strings nested in a free JSON value are not arguments to copy.
    assert!(accepts(
        &g,
        r#"<tool_call>[{"name":"log_weight","arguments":{"kg":70,"note":["anything"]}}]</tool_call>"#
    ));
}

#[test]
fn a_request_shorter_than_min_length_leaves_the_string_free() {
    let tools =
        r#"[{"name":"tag","parameters":{"properties":{"text":{"type":"string","minLength":8}}}}]"#;
    let g = Grammar::new(&json::parse(tools).unwrap(), Some("tag it")).unwrap();
    assert!(accepts(
        &g,
        r#"<tool_call>[{"name":"tag","arguments":{"text":"anything long"}}]</tool_call>"#
    ));
    let g = Grammar::new(&json::parse(tools).unwrap(), Some("tag it as urgent")).unwrap();
    assert!(accepts(
        &g,
        r#"<tool_call>[{"name":"tag","arguments":{"text":"it as urgent"}}]</tool_call>"#
    ));
    assert!(
        !accepts(&g, r#"<tool_call>[{"name":"tag","arguments":{"text":"urgent"}}]</tool_call>"#),
        "shorter than 8"
    );
}

#[test]
fn the_turn_may_end_only_after_the_call_list_closes() {
    let g = grammar();
    let full = "<tool_call>[]</tool_call>";
    for end in 0..full.len() {
        assert!(!run(&g, &full[..end]).1, "could stop after {:?}", &full[..end]);
    }
    assert!(accepts(&g, full));
}

#[test]
fn without_tools_only_the_refusal_is_possible() {
    let g = Grammar::new(&json::Value::Null, None).unwrap();
    assert!(accepts(&g, "<tool_call>[]</tool_call>"));
    assert_eq!(run(&g, r#"<tool_call>[{"name":"x"}]"#).0, "<tool_call>[".len());
}

#[test]
fn a_required_call_masks_the_refusal_only() {
    let mut g = grammar();
    g.require_call = true;
    assert_eq!(run(&g, "<tool_call>[]</tool_call>").0, "<tool_call>[".len());
    assert_eq!(run(&g, "<tool_call>[ ]").0, "<tool_call>[ ".len());
    assert!(accepts(&g, r#"<tool_call>[{"name":"pause","arguments":{}}]</tool_call>"#));
    walk(&g);
}

#[test]
fn tool_lists_that_cannot_be_compiled_are_typed_errors() {
    for bad in [r#"{"name":"x"}"#, r#"[{"description":"nameless"}]"#, r#"[3]"#] {
        let err = Grammar::new(&json::parse(bad).unwrap(), None).expect_err(bad);
        assert_eq!(err.code(), "invalid_argument");
    }
}

/// A small deterministic generator for the walk below.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn every_accepted_prefix_can_still_be_continued() {
    // Random walks over the accepted bytes (biased towards structure so walks finish): the
    // matcher must never reach a state, other than the end, from which no byte is accepted.
    for g in [grammar(), extractive_grammar()] {
        walk(&g);
    }
}

fn walk(g: &Grammar) {
    let structural = b"<>/_[]{}\":,abcdefghijklmnopqrstuvwxyz0123456789.-e ";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut finished = 0;
    for _ in 0..400 {
        let mut m = Matcher::default();
        for _ in 0..400 {
            if m.can_stop() {
                finished += 1;
                break;
            }
            let allowed: Vec<u8> = (0..=255u8).filter(|&b| m.clone().advance(g, b)).collect();
            assert!(!allowed.is_empty(), "dead end in {m:?}");
            let preferred: Vec<u8> =
                allowed.iter().copied().filter(|b| structural.contains(b)).collect();
            let pool =
                if !preferred.is_empty() && rng.below(8) != 0 { &preferred } else { &allowed };
            let b = pool[rng.below(pool.len())];
            assert!(m.advance(g, b));
        }
    }
    assert!(finished > 50, "only {finished} walks reached the end");
}

#[test]
fn a_request_with_nothing_to_copy_leaves_strings_free_so_a_call_can_finish() {
    // Fuzz finding (target `sampling`): an empty query made every extractive string impossible
    // to close, so a required call could never be written.
    for request in ["", "   ", "\n\t"] {
        let g = Grammar::new(&json::parse(TOOLS).unwrap(), Some(request)).unwrap();
        let call = r#"<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen","action":"on","color":"red"}}]</tool_call>"#;
        assert!(accepts(&g, call), "{request:?}");
    }
}

#[test]
fn no_free_text_spells_a_marker_the_response_parser_reads_as_structure() {
    let g = grammar();
    let lights = r#"{"name":"control_lights","arguments":{"room":"kitchen","action":"on","color":"#;
    for (text, marker) in [
        (alloc::format!("<think>a {IM_END} b</think><tool_call>[]</tool_call>"), IM_END),
        (
            alloc::format!(
                r#"<tool_call>[{{"name":"log","arguments":{{"x":"a{IM_END}"}}}}]</tool_call>"#
            ),
            IM_END,
        ),
        (
            alloc::format!(
                r#"<tool_call>[{{"name":"log","arguments":{{"{THINK_START}":1}}}}]</tool_call>"#
            ),
            THINK_START,
        ),
        (alloc::format!(r#"<tool_call>[{lights}"{IM_END}"}}}}]</tool_call>"#), IM_END),
    ] {
        // Refused at the marker's last byte: the parser would lose the calls after it.
        let last = text.find(marker).unwrap() + marker.len() - 1;
        assert_eq!(run(&g, &text), (last, false), "{text}");
        // One byte short of the marker, the turn is written whole and read back whole.
        let broken = alloc::format!("{}{}", &text[..last], &text[last + 1..]);
        assert!(accepts(&g, &broken), "{broken}");
        let read = response::parse(&broken);
        assert!(
            read.parse_error.is_none()
                && read.kind() == if broken.contains("name") { "call" } else { "refuse" },
            "{broken}"
        );
    }
}
