//! Full-schema decoding: random walks through what the matcher allows always end in JSON that
//! parses and validates against the schema (checked by an independent validator below).
use alloc::string::String;
use alloc::vec::Vec;

use super::full_schema::FullSchemas;
use super::full_value::FullValue;
use super::json_value::Step;
use super::matcher::Matcher;
use super::schema::Grammar;
use crate::json::{self, Value};

const SCHEMA: &str = r#"{"type":"object","properties":{
  "title":{"type":"string","minLength":2,"maxLength":12},
  "priority":{"enum":["low","high",3,null,true]},
  "score":{"type":"number","minimum":-1.5,"exclusiveMaximum":2},
  "count":{"type":"integer","minimum":10,"maximum":250},
  "code":{"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"},
  "when":{"type":"string","format":"date"},
  "tags":{"type":"array","items":{"type":"string","maxLength":4},"minItems":1,"maxItems":3},
  "done":{"type":"boolean"},
  "owner":{"type":"object","properties":{
     "name":{"type":"string"},"age":{"type":"integer","exclusiveMinimum":0,"maximum":120},
     "pets":{"type":"array","maxItems":2,"items":{"type":"object","properties":{"kind":{"const":"cat"}},"required":["kind"]}}},
   "required":["name","age"],"additionalProperties":false},
  "extra":{},
  "nothing":{"type":"null"}},
 "required":["title","count","code","owner"]}"#;

/// xorshift64*: a deterministic byte source for the walks.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Bytes a walk prefers once it has run long: ones that close what is open.
const CLOSING: &[u8] = b"\"]}0";

/// A random value the matcher allows: each byte drawn from those it accepts (after a while,
/// closing bytes first, so the walk ends).
fn walk(schemas: &FullSchemas, seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut value = FullValue::new(schemas.roots[0]);
    let mut out = Vec::new();
    for step in 0..20_000 {
        let allowed: Vec<(u8, Step)> = (0..=255u8)
            .filter_map(|b| {
                let mut next = value;
                let s = next.step(schemas, b);
                (s != Step::Rejected).then_some((b, s))
            })
            .collect();
        assert!(!allowed.is_empty(), "stranded after {:?}", String::from_utf8_lossy(&out));
        let printable: Vec<(u8, Step)> =
            allowed.iter().copied().filter(|(b, _)| (0x20..0x7f).contains(b)).collect();
        let closing: Vec<(u8, Step)> =
            allowed.iter().copied().filter(|(b, _)| CLOSING.contains(b)).collect();
        let (b, s) = if step > 400 && !closing.is_empty() && !rng.next().is_multiple_of(4) {
            rng.pick(&closing)
        } else if !printable.is_empty() && !rng.next().is_multiple_of(16) {
            rng.pick(&printable)
        } else {
            rng.pick(&allowed)
        };
        match s {
            Step::DoneReprocess => return String::from_utf8(out).expect("UTF-8"),
            _ => {
                value.step(schemas, b);
                out.push(b);
            }
        }
        if s == Step::Done {
            return String::from_utf8(out).expect("UTF-8");
        }
    }
    panic!("no end after 20000 bytes: {}", String::from_utf8_lossy(&out));
}

/// Why `v` does not satisfy `schema` (the keywords [`SCHEMA`] uses), or `None`.
fn invalid(v: &Value, schema: &Value) -> Option<String> {
    let num = |v: &Value| match v {
        Value::Int(d) => d.parse::<f64>().ok(),
        Value::Float(x) => Some(*x),
        _ => None,
    };
    let fail = |what: &str| Some(alloc::format!("{} fails {what}", v.to_json()));
    if let Some(Value::Array(options)) = schema.get("enum") {
        return (!options.contains(v)).then(|| alloc::format!("{} not in enum", v.to_json()));
    }
    if let Some(c) = schema.get("const") {
        return (c != v).then(|| "const".into());
    }
    match (schema.get("type").and_then(Value::as_str), v) {
        (None, _) => None,
        (Some("null"), Value::Null) | (Some("boolean"), Value::Bool(_)) => None,
        (Some("string"), Value::String(s)) => {
            let n = s.chars().count() as f64;
            let bound = |k| schema.get(k).and_then(num);
            if bound("minLength").is_some_and(|m| n < m)
                || bound("maxLength").is_some_and(|m| n > m)
            {
                return fail("length");
            }
            let is = |s: &str, shape: &str| {
                s.len() == shape.len()
                    && s.bytes().zip(shape.bytes()).all(|(c, k)| match k {
                        b'9' => c.is_ascii_digit(),
                        b'A' => c.is_ascii_uppercase(),
                        _ => c == k,
                    })
            };
            match (
                schema.get("pattern").and_then(Value::as_str),
                schema.get("format").and_then(Value::as_str),
            ) {
                (Some(_), _) if !is(s, "AA-999") => fail("pattern"),
                (_, Some("date")) if !is(s, "9999-99-99") => fail("format"),
                _ => None,
            }
        }
        (Some(t @ ("integer" | "number")), Value::Int(_) | Value::Float(_)) => {
            let x = num(v)?;
            let b = |k| schema.get(k).and_then(num);
            if t == "integer" && !matches!(v, Value::Int(_)) {
                return fail("integer");
            }
            let out = b("minimum").is_some_and(|m| x < m)
                || b("maximum").is_some_and(|m| x > m)
                || b("exclusiveMinimum").is_some_and(|m| x <= m)
                || b("exclusiveMaximum").is_some_and(|m| x >= m);
            if out {
                fail("bounds")
            } else {
                None
            }
        }
        (Some("array"), Value::Array(items)) => {
            let n = items.len() as f64;
            let bound = |k| schema.get(k).and_then(num);
            if bound("minItems").is_some_and(|m| n < m) || bound("maxItems").is_some_and(|m| n > m)
            {
                return fail("item count");
            }
            let item = schema.get("items")?;
            items.iter().find_map(|i| invalid(i, item))
        }
        (Some("object"), Value::Object(members)) => {
            let Some(Value::Object(props)) = schema.get("properties") else {
                return None;
            };
            if let Some(Value::Array(req)) = schema.get("required") {
                if let Some(missing) =
                    req.iter().filter_map(Value::as_str).find(|k| v.get(k).is_none())
                {
                    return fail(&alloc::format!("required {missing}"));
                }
            }
            members.iter().find_map(|(k, m)| match props.iter().find(|(p, _)| p == k) {
                Some((_, s)) => invalid(m, s),
                None => fail(&alloc::format!("undeclared key {k}")),
            })
        }
        _ => fail("type"),
    }
}

#[test]
fn every_walk_parses_and_validates_against_the_schema() {
    let schema = json::parse(SCHEMA).unwrap();
    let tools = Value::Array(alloc::vec![Value::Object(alloc::vec![
        ("name".into(), Value::String("record".into())),
        ("parameters".into(), schema.clone()),
    ])]);
    let schemas = FullSchemas::new(&tools).unwrap();
    let mut keys_seen = 0usize;
    // Walks that wrote a code point past U+FFFF as raw UTF-8 (escapes: json_value's tests).
    let mut astral = 0;
    for seed in 0..300 {
        let text = walk(&schemas, seed);
        astral += text.chars().any(|c| c > '\u{ffff}') as usize;
        let value = json::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}: {text}"));
        if let Some(why) = invalid(&value, &schema) {
            panic!("seed {seed}: {why} in {text}");
        }
        if let Value::Object(members) = &value {
            keys_seen = keys_seen.max(members.len());
        }
    }
    assert!(keys_seen >= 8, "the walks reach the optional keys ({keys_seen})");
    assert!(astral > 0, "the walks write raw UTF-8 past U+FFFF");
}

#[test]
fn a_patterned_string_never_spells_a_marker_either() {
    let schema = r#"{"type":"object","properties":{"s":{"type":"string","pattern":"^.*$"}}}"#;
    let schemas = FullSchemas::new(&Value::Array(alloc::vec![Value::Object(alloc::vec![
        ("name".into(), Value::String("say".into())),
        ("parameters".into(), json::parse(schema).unwrap()),
    ])]))
    .unwrap();
    let takes = |text: &str| {
        let mut value = FullValue::new(schemas.roots[0]);
        text.bytes().all(|b| value.step(&schemas, b) != Step::Rejected)
    };
    assert!(takes(r#"{"s":"a <|im_end| </tool_call <think"#));
    for marker in ["<|im_end|>", "</tool_call>", "<think>"] {
        assert!(!takes(&alloc::format!(r#"{{"s":"a {marker}"#)), "{marker}");
    }
}

#[test]
fn the_tool_call_format_carries_full_schema_arguments() {
    let tools =
        json::parse(&alloc::format!(r#"[{{"name":"record","parameters":{SCHEMA}}}]"#)).unwrap();
    let mut g = Grammar::new(&tools, None).unwrap();
    g.full = Some(FullSchemas::new(&tools).unwrap());
    let accepts = |text: &str| {
        let mut m = Matcher::default();
        text.bytes().all(|b| m.advance(&g, b)) && m.can_stop()
    };
    let owner = r#""owner":{"name":"Ana","age":33,"pets":[{"kind":"cat"}]}"#;
    let good = alloc::format!(
        r#"<tool_call>[{{"name":"record","arguments":{{"title":"Lunch","count":12,"code":"AB-123",{owner}}}}}]</tool_call>"#
    );
    assert!(accepts(&good), "{good}");
    for bad in [
        good.replace("\"count\":12", "\"count\":9"),
        good.replace("AB-123", "AB-12"),
        good.replace("\"age\":33", "\"age\":0"),
        good.replace("\"cat\"", "\"dog\""),
        good.replace("\"title\":\"Lunch\"", "\"title\":\"L\""),
        good.replace(",\"count\":12", ""),
        good.replace("\"Ana\"", "\"Ana\",\"x\":1"),
    ] {
        assert!(!accepts(&bad), "{bad}");
    }
}

#[test]
fn keywords_the_matcher_cannot_hold_are_refused_by_name() {
    for schema in [
        r#"{"anyOf":[{"type":"number"},{"type":"integer"}]}"#,
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}"##,
        r#"{"type":"number","multipleOf":0.5}"#,
        r#"{"type":"string","pattern":"(?=x)"}"#,
        r#"{"type":"string","format":"hostname"}"#,
        r#"{"type":"integer","minimum":3,"maximum":2}"#,
        r#"{"allOf":[{"type":"string"}]}"#,
        r#"{"enum":[1,12]}"#,
        r#"{"type":"object","properties":{"a":{}},"required":["b"]}"#,
    ] {
        let tools =
            json::parse(&alloc::format!(r#"[{{"name":"t","parameters":{schema}}}]"#)).unwrap();
        let e = FullSchemas::new(&tools).unwrap_err();
        assert_eq!(e.code(), "unsupported", "{schema}: {e}");
        assert!(alloc::format!("{e}").contains(" at t#"), "{schema}: {e}");
    }
}

#[test]
fn walks_through_unions_refs_formats_and_unique_items_always_finish() {
    let schema = r##"{"$defs":{"pt":{"type":"object","properties":{"x":{"type":"integer","multipleOf":3}},"required":["x"]}},
      "type":"object","properties":{
      "u":{"anyOf":[{"type":"string","format":"date-time","maxLength":30},{"type":"null"},{"$ref":"#/$defs/pt"},{"type":"array","items":{"enum":["a","b",1]},"uniqueItems":true,"minItems":1}]},
      "d":{"oneOf":[{"type":"object","properties":{"k":{"enum":["p","q"]},"v":{"type":"number","exclusiveMinimum":0.5,"exclusiveMaximum":0.75}},"required":["k","v"]},
                    {"type":"object","properties":{"k":{"const":7},"e":{"type":"string","format":"email","minLength":8,"maxLength":9}},"required":["k","e"]}]},
      "t":{"type":["boolean","string"],"pattern":"^(ab)*$","minLength":3,"maxLength":5}},
      "required":["u","d","t"]}"##;
    let tools = json::parse(&alloc::format!(r#"[{{"name":"t","parameters":{schema}}}]"#)).unwrap();
    let schemas = FullSchemas::new(&tools).unwrap();
    let mut kinds = [0usize; 4];
    for seed in 0..300 {
        let text = walk(&schemas, seed);
        let value = json::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}: {text}"));
        let u = value.get("u").unwrap();
        kinds[match u {
            Value::String(_) => 0,
            Value::Null => 1,
            Value::Object(_) => 2,
            _ => 3,
        }] += 1;
        if let Value::Array(items) = u {
            assert!(items.iter().enumerate().all(|(i, x)| !items[..i].contains(x)), "{text}");
        }
        if let Some(Value::Int(x)) = u.get("x") {
            assert!(x.parse::<i64>().unwrap() % 3 == 0, "{text}");
        }
        let d = value.get("d").unwrap();
        match d.get("k") {
            Some(Value::Int(_)) => {
                let e = d.get("e").and_then(Value::as_str).unwrap();
                assert!((8..=9).contains(&e.len()) && e.contains('@'), "{text}");
            }
            _ => {
                let v = match d.get("v") {
                    Some(Value::Float(v)) => *v,
                    other => panic!("{other:?} in {text}"),
                };
                assert!(v > 0.5 && v < 0.75, "{text}");
            }
        }
        if let Some(Value::String(t)) = value.get("t") {
            assert!(t == "abab", "{text}");
        }
    }
    assert!(kinds.iter().all(|&n| n > 0), "every alternative is walked: {kinds:?}");
}
