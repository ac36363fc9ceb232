//! Grounding checks: whether a completion's call arguments are backed by what the user wrote.
//!
//! Every completion carries a [`Validation`], upstream's `validation` object:
//! - `ungrounded`: `tool.path` names of argument values the input does not license:
//!   - a number (JSON number, not a boolean) that no number written in the user-side texts or
//!     the system text equals, thousands separators normalised and the `date:` fact left out
//!     (upstream's `_grounded_number_paths`: "21" licenses `21` and `21.0`, "1,500" `1500`);
//!   - a `date` / `date-time` string (by the tool's schema) whose year is not among the years
//!     the user-side texts write, once they write any; the system text's years (the date fact)
//!     count too when the newest message reasons relatively ("tomorrow", "next friday")
//!     (upstream's `_annotate_ungrounded`).
//! - `negation`: the newest message negates its request ("don't", "do not", "never", "no
//!   need to", "not to"), so a call may do the opposite of what was asked.
//!
//! Upstream's engine reports the numeric flags and `negation` from native code that is not
//! published; the rules above are the ones its Python layer applies on top (strict `run()`
//! and `extract()` clear a flagged number the text writes), so a flag here is exactly what
//! upstream's strict mode rejects. The user-side texts are every user turn and tool result of
//! the conversation, so a number a tool returned may be passed on.
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::json::{self, Value};
use crate::response::FunctionCall;
use crate::text_search;

mod date;
mod lower;
mod numbers;
mod years;

pub use date::{fact_from_unix, with_date_fact};
use numbers::Decimal;

/// What the grounding checks found in one completion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validation {
    /// `tool.path` of each argument value the input does not license.
    pub ungrounded: Vec<String>,
    /// The newest message negates its request.
    pub negation: bool,
}

impl Validation {
    /// `{"ungrounded": [...], "negation": bool}`.
    pub fn to_value(&self) -> Value {
        let names = self.ungrounded.iter().map(|n| Value::String(n.clone())).collect();
        Value::Object(alloc::vec![
            ("ungrounded".into(), Value::Array(names)),
            ("negation".into(), Value::Bool(self.negation))
        ])
    }
}

/// What a request's calls are checked against.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grounds {
    /// The tool list (flat schemas), for the argument formats.
    pub tools: Option<Value>,
    /// Every user-side text of the conversation, oldest first: user turns, tool results, and
    /// last the newest message.
    pub inputs: Vec<String>,
    /// The system text as rendered (the date fact included).
    pub system: String,
}

impl Grounds {
    /// Checks `calls` against the tool list and the texts.
    pub fn validate(&self, calls: &[FunctionCall]) -> Validation {
        let newest = self.inputs.last().map_or("", String::as_str);
        let written: Vec<Decimal> = self
            .inputs
            .iter()
            .chain([&self.system])
            .flat_map(|t| numbers::numbers(&without_date_facts(t)))
            .collect();
        let mut ungrounded = Vec::new();
        for call in calls {
            numeric_leaves(&call.arguments, String::new(), &mut |path, value| {
                if !Decimal::parse(value).is_some_and(|d| written.contains(&d)) {
                    ungrounded.push(format!("{}.{path}", call.name));
                }
            });
        }
        // Inserted one at a time: collecting into the set would sort first, with a copy of the
        // standard sort of its own (crate::sort says why that is avoided).
        let mut years = BTreeSet::new();
        years.extend(self.inputs.iter().flat_map(|t| years::source_years(t)));
        if !years.is_empty() && !self.system.is_empty() && years::relative_cue(newest) {
            years.extend(years::source_years(&self.system));
        }
        if !years.is_empty() {
            for call in calls {
                let Some(schema) = self.schema(&call.name) else { continue };
                let root = schema.get("parameters").unwrap_or(schema);
                let mut failures = BTreeSet::new();
                walk_dates(&call.arguments, root, root, String::new(), &years, &mut failures);
                for path in failures {
                    let name = format!("{}.{path}", call.name);
                    if !ungrounded.contains(&name) {
                        ungrounded.push(name);
                    }
                }
            }
        }
        Validation { ungrounded, negation: negates(newest) }
    }

    fn schema(&self, name: &str) -> Option<&Value> {
        self.tools
            .as_ref()?
            .as_array()?
            .iter()
            .find(|s| s.get("name").and_then(Value::as_str) == Some(name))
    }
}

/// Calls `f(path, number_text)` for every numeric leaf of `value`, paths as upstream writes
/// them (`a.b[0]`).
fn numeric_leaves(value: &Value, path: String, f: &mut impl FnMut(&str, &str)) {
    match value {
        Value::Int(text) => f(&path, text),
        Value::Float(x) => {
            let mut text = String::new();
            json::write_float(*x, &mut text);
            f(&path, &text);
        }
        Value::Object(members) => {
            for (key, item) in members {
                let sub = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                numeric_leaves(item, sub, f);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                numeric_leaves(item, format!("{path}[{i}]"), f);
            }
        }
        _ => {}
    }
}

/// Upstream's `_walk_grounding`: date strings whose year is not licensed, by schema path.
fn walk_dates(
    value: &Value,
    node: &Value,
    root: &Value,
    path: String,
    years: &BTreeSet<u32>,
    failures: &mut BTreeSet<String>,
) {
    let mut node = resolve(node, root);
    let variants =
        node.get("anyOf").or_else(|| node.get("oneOf")).and_then(Value::as_array).unwrap_or(&[]);
    let concrete: Vec<&Value> = variants
        .iter()
        .filter(|v| resolve(v, root).get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    if let [only] = concrete[..] {
        node = resolve(only, root);
    }
    let format = node.get("format").and_then(Value::as_str);
    match value {
        Value::String(s) if matches!(format, Some("date" | "date-time")) => {
            let b = s.as_bytes();
            if b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' {
                let year: u32 = s[..4].parse().unwrap_or(0);
                if !years.contains(&year) {
                    failures.insert(path);
                }
            }
        }
        Value::Object(members) => {
            let properties = node.get("properties");
            for (key, item) in members {
                if let Some(sub) = properties.and_then(|p| p.get(key)) {
                    let sub_path =
                        if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                    walk_dates(item, sub, root, sub_path, years, failures);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_node) = node.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk_dates(item, item_node, root, format!("{path}[{i}]"), years, failures);
                }
            }
        }
        _ => {}
    }
}

/// Follows `$ref` pointers (`#/a/b`) within `root`, stopping at a cycle or a dead end.
fn resolve<'v>(mut node: &'v Value, root: &'v Value) -> &'v Value {
    let empty: &'static Value = &EMPTY;
    let mut seen: Vec<&str> = Vec::new();
    while let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        if seen.contains(&reference) {
            break;
        }
        seen.push(reference);
        let mut target = root;
        let mut path = reference;
        while let Some(rest) = path.strip_prefix("#/") {
            path = rest;
        }
        for part in path.split('/').filter(|p| !p.is_empty()) {
            target = target.get(&unescape(part)).unwrap_or(empty);
        }
        if core::ptr::eq(target, node) {
            break;
        }
        node = target;
    }
    node
}

/// A JSON Pointer token's key: `~1` is `/` and `~0` is `~` (RFC 6901; `~01` is `~1`), read left
/// to right as `replace("~1", "/").replace("~0", "~")` would (without core's `str` search).
fn unescape(token: &str) -> String {
    let mut key = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        let escaped = match chars.clone().next() {
            Some('1') if c == '~' => '/',
            Some('0') if c == '~' => '~',
            _ => {
                key.push(c);
                continue;
            }
        };
        chars.next();
        key.push(escaped);
    }
    key
}

static EMPTY: Value = Value::Object(Vec::new());

/// Upstream's `_DATE_FACT`: `date: YYYY-MM-DD[ Ddd][ HH:MM]` and `YYYY-MM-DDTHH:MM[:SS]`
/// stamps, each replaced by a space so their digits are not counted as written numbers.
fn without_date_facts(text: &str) -> String {
    let b = text.as_bytes();
    let digits =
        |i: usize, n: usize| i + n <= b.len() && b[i..i + n].iter().all(u8::is_ascii_digit);
    let iso = |i: usize| {
        digits(i, 4)
            && b.get(i + 4) == Some(&b'-')
            && digits(i + 5, 2)
            && b.get(i + 7) == Some(&b'-')
            && digits(i + 8, 2)
    };
    let spaces =
        |i: usize| b[i.min(b.len())..].iter().take_while(|c| c.is_ascii_whitespace()).count();
    // `\s+` then `pattern` of `len` bytes at the end of a match: the new end, if it matches.
    let then = |end: usize, len: usize, ok: &dyn Fn(usize) -> bool| {
        let gap = spaces(end);
        (gap > 0 && ok(end + gap)).then_some(end + gap + len)
    };
    let fact_at = |i: usize| -> Option<usize> {
        if b[i..].starts_with(b"date:") {
            let at = i + 5 + spaces(i + 5);
            if !iso(at) {
                return None;
            }
            let mut end = at + 10;
            end = then(end, 3, &|j| {
                j + 3 <= b.len() && b[j..j + 3].iter().all(u8::is_ascii_alphabetic)
            })
            .unwrap_or(end);
            end =
                then(end, 5, &|j| digits(j, 2) && b.get(j + 2) == Some(&b':') && digits(j + 3, 2))
                    .unwrap_or(end);
            return Some(end);
        }
        if iso(i)
            && b.get(i + 10) == Some(&b'T')
            && digits(i + 11, 2)
            && b.get(i + 13) == Some(&b':')
            && digits(i + 14, 2)
        {
            let end = i + 16;
            return Some(if b.get(end) == Some(&b':') && digits(end + 1, 2) {
                end + 3
            } else {
                end
            });
        }
        None
    };
    let mut out = String::new();
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match fact_at(i) {
            Some(end) => {
                out.push_str(&text[copied..i]);
                out.push(' ');
                copied = end;
                i = end;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether `text` negates its request.
fn negates(text: &str) -> bool {
    const CUES: [&str; 7] =
        ["do not", "don't", "don\u{2019}t", "dont", "never", "no need to", "not to"];
    let lower = lower::lower(text);
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    CUES.iter().any(|cue| {
        text_search::positions(&lower, cue).any(|i| {
            !word(lower[..i].chars().next_back()) && !word(lower[i + cue.len()..].chars().next())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> FunctionCall {
        FunctionCall { name: name.into(), arguments: json::parse(args).unwrap() }
    }

    fn check(calls: &[FunctionCall], tools: &str, query: &str, system: &str) -> Validation {
        let grounds = Grounds {
            tools: Some(json::parse(tools).unwrap()),
            inputs: alloc::vec![query.into()],
            system: system.into(),
        };
        grounds.validate(calls)
    }

    const TOOLS: &str = r##"[{"name":"book","parameters":{"type":"object","properties":{
        "guests":{"type":"integer"},"when":{"type":"string","format":"date"},
        "slots":{"type":"array","items":{"$ref":"#/$defs/slot"}}},
        "$defs":{"slot":{"anyOf":[{"type":"null"},{"type":"string","format":"date-time"}]}}}}]"##;

    #[test]
    fn numbers_must_be_written_in_the_query_or_the_system_text() {
        let v = check(
            &[call("book", r#"{"guests":1500,"extra":{"n":[2.0, 7]},"ok":true}"#)],
            TOOLS,
            "book 1,500 seats and 2 more",
            "",
        );
        assert_eq!(v.ungrounded, ["book.extra.n[1]"]);
        assert!(!v.negation);
        // The system text licenses numbers; its date fact does not.
        let v = check(
            &[call("book", r#"{"guests":7,"day":2}"#)],
            TOOLS,
            "book it",
            "date: 2026-12-02 Wed 06:45; tables of 7",
        );
        assert_eq!(v.ungrounded, ["book.day"]);
    }

    #[test]
    fn date_years_must_be_written_or_licensed_by_the_date_fact_for_relative_requests() {
        let args = r#"{"when":"2025-06-05","slots":["2024-06-05T10:00"]}"#;
        let v = check(&[call("book", args)], TOOLS, "on 5 June 2024", "");
        assert_eq!(v.ungrounded, ["book.when"]);
        // Through `$ref` and a nullable `anyOf`.
        let v = check(
            &[call("book", r#"{"slots":[null,"2023-06-05T10:00"]}"#)],
            TOOLS,
            "on 5 June 2024",
            "",
        );
        assert_eq!(v.ungrounded, ["book.slots[1]"]);
        // No year written: nothing to contradict.
        assert!(check(&[call("book", args)], TOOLS, "on 5 June", "date: 2025-01-01")
            .ungrounded
            .is_empty());
        // A relative cue lets the date fact's year in; without one it does not.
        let dated = "date: 2025-01-01 Wed 10:00";
        assert!(check(&[call("book", args)], TOOLS, "next year, after 5 June 2024", dated)
            .ungrounded
            .is_empty());
        assert_eq!(
            check(&[call("book", args)], TOOLS, "after 5 June 2024", dated).ungrounded,
            ["book.when"]
        );
    }

    #[test]
    fn negated_requests_are_flagged() {
        for q in [
            "Don't turn on the lights",
            "please do NOT call mom",
            "never book 2",
            "I asked you not to",
        ] {
            assert!(check(&[], TOOLS, q, "").negation, "{q}");
        }
        for q in ["turn on the lights", "dontaine street", "nevermind the rest", "a knot tonight"] {
            assert!(!check(&[], TOOLS, q, "").negation, "{q}");
        }
    }

    #[test]
    fn date_facts_are_not_written_numbers() {
        assert_eq!(without_date_facts("date: 2026-12-02 Wed 06:45; 7 seats"), " ; 7 seats");
        assert_eq!(without_date_facts("at 2026-12-02T06:45:10 ok"), "at   ok");
        assert_eq!(without_date_facts("date:2026-12-02, x"), " , x");
        assert_eq!(without_date_facts("2026-12-02 stays"), "2026-12-02 stays");
    }

    #[test]
    fn pointer_tokens_unescape_as_rfc_6901_replaces() {
        for token in ["a~1b", "~01", "~~1", "~0~1", "~", "a~", "~2", "é~1é", "~10", "plain"] {
            assert_eq!(unescape(token), token.replace("~1", "/").replace("~0", "~"), "{token}");
        }
    }
}
