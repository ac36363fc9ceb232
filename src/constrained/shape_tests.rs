//! The schema shapes zod 4 and OpenAI users write (nullable types, unions, `$ref`, formats with
//! patterns, `multipleOf`, `uniqueItems`) are held; schemas no value meets, and bounds that are
//! not bounds, are refused up front with their path; a pattern's required tail is closed.
use alloc::string::String;

use super::closing::closing_bytes;
use super::full_schema::FullSchemas;
use super::full_value::FullValue;
use super::json_value::Step;
use super::matcher::Matcher;
use super::schema::Grammar;
use crate::json::{self, Value};
use crate::{Error, Result};

fn tools(schema: &str) -> Value {
    json::parse(&alloc::format!(r#"[{{"name":"t","parameters":{schema}}}]"#)).unwrap()
}

fn compile(schema: &str) -> Result<FullSchemas> {
    FullSchemas::new(&tools(schema))
}

/// Whether `text` is one whole value of the (first) tool's schema.
fn takes(s: &FullSchemas, text: &str) -> bool {
    let mut v = FullValue::new(s.roots[0]);
    let mut steps = text.bytes().map(|b| v.step(s, b)).collect::<alloc::vec::Vec<_>>();
    steps.push(v.step(s, b','));
    let n = steps.len();
    steps[..n - 2].iter().all(|&st| st == Step::Consumed)
        && (steps[n - 2] == Step::Done
            || (steps[n - 2] == Step::Consumed && steps[n - 1] == Step::DoneReprocess))
}

fn check(schema: &str, good: &[&str], bad: &[&str]) {
    let s = compile(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for text in good {
        assert!(takes(&s, text), "{schema} refused {text}");
    }
    for text in bad {
        assert!(!takes(&s, text), "{schema} took {text}");
    }
}

#[test]
fn nullable_types_and_unions_told_apart_by_type() {
    check(
        r#"{"type":["string","null"],"maxLength":3}"#,
        &[r#""abc""#, "null"],
        &[r#""abcd""#, "1", "nul"],
    );
    check(
        r#"{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"type":"null"}]}"#,
        &[r#"{"a":1}"#, "null"],
        &["{}", r#"{"a":null}"#],
    );
    check(r#"{"type":["integer","number"]}"#, &["1", "-2.5"], &["true"]);
    // zod 4's union of literals, and an enum made nullable.
    check(
        r#"{"anyOf":[{"type":"string","const":"a"},{"type":"string","const":"b"},{"type":"number","const":3},{"anyOf":[{"enum":["c",null]}]}]}"#,
        &[r#""a""#, r#""b""#, "3", r#""c""#, "null"],
        &[r#""d""#, "4"],
    );
    check(
        r#"{"oneOf":[{"type":"string","format":"date"},{"type":"array","items":{"type":"boolean"}},{"enum":[1,2]}]}"#,
        &[r#""2024-02-29""#, "[true,false]", "2"],
        &[r#""2023-02-29""#, "3"],
    );
}

#[test]
fn objects_told_apart_by_a_const_key_written_first() {
    // What zod 4 writes for z.discriminatedUnion('kind', ...).
    let du = r#"{"oneOf":[
      {"type":"object","properties":{"kind":{"type":"string","const":"a"},"x":{"type":"number"}},"required":["kind","x"],"additionalProperties":false},
      {"type":"object","properties":{"kind":{"type":"string","const":"b"},"y":{"type":"string"}},"required":["kind","y"],"additionalProperties":false}]}"#;
    check(
        du,
        &[r#"{"kind":"a","x":1.5}"#, r#"{"kind":"b","y":"s"}"#],
        &[r#"{"kind":"a","y":"s"}"#, r#"{"x":1,"kind":"a"}"#, r#"{"kind":"a"}"#],
    );
    let untold = r#"{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},
      {"type":"object","properties":{"b":{"type":"string"}}}]}"#;
    assert_eq!(compile(untold).unwrap_err().code(), "unsupported");
}

#[test]
fn refs_into_the_schema_are_followed_and_recursion_is_refused() {
    check(
        r##"{"$defs":{"addr":{"type":"object","properties":{"street":{"type":"string","maxLength":4}},"required":["street"]}},
          "type":"object","properties":{"home":{"$ref":"#/$defs/addr"},"work":{"$ref":"#/$defs/addr"}},"required":["home"]}"##,
        &[r#"{"home":{"street":"Elm"},"work":{"street":"Oak"}}"#],
        &[r#"{"home":{"street":"Elmwood"}}"#, r#"{"work":{"street":"Oak"}}"#],
    );
    for schema in [
        r##"{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}}"##,
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}"##,
        r##"{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}"##,
    ] {
        assert_eq!(compile(schema).unwrap_err().code(), "unsupported", "{schema}");
    }
}

#[test]
fn multiples_and_unique_enum_items() {
    check(r#"{"type":"integer","multipleOf":5,"minimum":1}"#, &["15", "5"], &["12", "0", "-5"]);
    check(
        r#"{"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true}"#,
        &[r#"["a","c"]"#, r#"["c","b","a"]"#, "[]"],
        &[r#"["a","a"]"#, r#"["a","b","a"]"#],
    );
    let too_many = r#"{"type":"array","items":{"enum":["a","b"]},"uniqueItems":true,"minItems":3}"#;
    assert_eq!(compile(too_many).unwrap_err().code(), "unsupported");
    let strings = r#"{"type":"array","items":{"type":"string"},"uniqueItems":true}"#;
    assert_eq!(compile(strings).unwrap_err().code(), "unsupported");
}

#[test]
fn a_format_beside_a_pattern_holds_both() {
    // zod 4's z.email(): the format and its own pattern, which wants a letters-only TLD.
    let zod = r#"{"type":"string","format":"email","pattern":"^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}"#;
    check(zod, &[r#""a.b@mail.co""#], &[r#""a@b.c""#, r#""a@b.c1""#, r#""a!b@c.de""#]);
    check(r#"{"type":"string","format":"email"}"#, &[r#""a!b@c.d""#], &[r#""a@b""#]);
    let both = r#"{"type":"string","format":"date","pattern":"^2024"}"#;
    check(both, &[r#""2024-02-29""#], &[r#""2023-01-01""#, r#""2024-13-01""#]);
    let neither = r#"{"type":"string","format":"hostname","pattern":"^[a-z]+$"}"#;
    assert_eq!(compile(neither).unwrap_err().code(), "unsupported");
}

#[test]
fn numbers_are_plain_decimals_an_f64_holds_exactly() {
    check(
        r#"{"type":"integer"}"#,
        &["999999999999999", "-7"],
        &["5555555555555555555555555555555555555555", "1e3"],
    );
    check(r#"{"type":"number"}"#, &["3.25", "-0.5"], &["3.3e+39", "1E5"]);
}

/// The error a schema is refused with: its code and message.
fn refusal(schema: &str) -> (&'static str, String) {
    let e: Error = compile(schema).unwrap_err();
    (e.code(), alloc::format!("{e}"))
}

#[test]
fn length_bounds_that_are_not_bounds_are_refused_with_their_path() {
    for (schema, code) in [
        (r#"{"minLength":10,"maxLength":2}"#, "unsupported"),
        (r#"{"maxLength":"3"}"#, "invalid_argument"),
        (r#"{"maxLength":2.5}"#, "invalid_argument"),
        (r#"{"maxLength":-1}"#, "invalid_argument"),
    ] {
        let schema = alloc::format!(
            r#"{{"type":"object","properties":{{"s":{{"type":"string",{}}}}}}}"#,
            &schema[1..schema.len() - 1]
        );
        let (got, message) = refusal(&schema);
        assert_eq!(got, code, "{schema}: {message}");
        assert!(message.ends_with("at t#/properties/s"), "{message}");
    }
    check(r#"{"type":"string","maxLength":2.0}"#, &[r#""ab""#], &[r#""abc""#]);
}

#[test]
fn schemas_no_value_meets_are_refused_up_front() {
    for schema in [
        r#"{"type":"number","minimum":1e308,"maximum":1.7e308}"#,
        r#"{"type":"number","exclusiveMinimum":0.1,"exclusiveMaximum":0.1000000000000001}"#,
        r#"{"type":"integer","minimum":1.2,"maximum":1.8}"#,
        r#"{"enum":["a</tool_call>"]}"#,
        r#"{"const":"x<|im_end|>"}"#,
        r#"{"type":"object","properties":{"<think>":{}}}"#,
        r#"{"type":"string","pattern":"^a</tool_call>$"}"#,
        r#"{"type":"string","pattern":"^a{3}$","minLength":10}"#,
        r#"{"type":"string","format":"date","maxLength":9}"#,
    ] {
        assert_eq!(refusal(schema).0, "unsupported", "{schema}");
    }
    let marked = json::parse(r#"[{"name":"a</tool_call>","parameters":{}}]"#).unwrap();
    assert_eq!(Grammar::new(&marked, None).err().map(|e| e.code()), Some("unsupported"));
}

#[test]
fn a_pattern_with_a_required_tail_is_closed_with_the_tail() {
    let tools = tools(
        r#"{"type":"object","properties":{"email":{"type":"string","format":"email","pattern":"^[a-z]+@[a-z]+\\.[a-z]{2,}$"}},"required":["email"]}"#,
    );
    let mut g = Grammar::new(&tools, None).unwrap();
    g.full = Some(FullSchemas::new(&tools).unwrap());
    g.require_call = true;
    let start = r#"<tool_call>[{"name":"t","arguments":{"email":"jo"#;
    let mut m = Matcher::default();
    assert!(m.feed(&g, start.as_bytes()));
    let close = closing_bytes(&m, &g).expect("a closing");
    assert_eq!(String::from_utf8(close).unwrap(), r#"@a.aa"}}]</tool_call>"#);
}
