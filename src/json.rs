//! A small JSON value type whose parse → render round trip is byte-identical to Python's
//! `json.dumps(json.loads(s), separators=(",", ":"), ensure_ascii=False)`.
//!
//! The prompt embeds the caller's tool schemas re-serialised the way upstream does, so every
//! rendering detail matters: object keys keep insertion order (a duplicate key keeps its first
//! position and takes the last value, like a Python dict), integers are rendered verbatim
//! (arbitrary length, `-0` becomes `0`), floats like Python's `repr`, strings escaped like
//! Python's encoder (non-ASCII raw).
//!
//! Like Python's decoder it accepts `NaN`, `Infinity` and `-Infinity`, and a float literal that
//! overflows (`1e999`) becomes infinity, rendered `Infinity`. Unlike Python it refuses lone UTF-16
//! surrogates (`"\ud800"`): a Rust string cannot hold them and upstream could not encode them to
//! UTF-8 either. Hostile input is bounded: nesting deeper than [`MAX_DEPTH`], inputs larger than
//! [`MAX_INPUT`] and integers longer than Python's 4300-digit conversion limit are refused with
//! [`Error::BadJson`], never a panic or a stack overflow.
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::{Error, Result};

/// Deepest array/object nesting accepted (Python's own limit is its recursion limit, ~1000;
/// tool schemas stay far below this, and the bound keeps recursion safe on a 1 MiB wasm stack).
pub const MAX_DEPTH: usize = 256;
/// Largest input accepted, in bytes.
pub const MAX_INPUT: usize = 16 << 20;
/// Longest integer literal accepted, in digits: CPython's `int_max_str_digits` default, past
/// which `json.loads` itself raises.
pub const MAX_INT_DIGITS: usize = 4300;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// An integer literal in canonical decimal form (optional `-`, no leading zeros).
    Int(String),
    Float(f64),
    String(String),
    Array(Vec<Value>),
    /// Members in insertion order, keys unique.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// Python truthiness of the decoded value (`if not tools:` in upstream's `build_prompt`).
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(digits) => digits != "0",
            // NaN is truthy in Python, and `NaN != 0.0` holds.
            Value::Float(x) => *x != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::Object(members) => !members.is_empty(),
        }
    }

    /// Compact rendering, identical to Python's
    /// `json.dumps(v, separators=(",", ":"), ensure_ascii=False)`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the compact rendering to `out`.
    pub fn write_json(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Int(digits) => out.push_str(digits),
            Value::Float(x) => write_float(*x, out),
            Value::String(s) => write_string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Value::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(key, out);
                    out.push(':');
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// Parses one JSON document (surrounding whitespace allowed, nothing else after it).
pub fn parse(text: &str) -> Result<Value> {
    if text.len() > MAX_INPUT {
        return Err(Error::BadJson {
            offset: MAX_INPUT,
            reason: "input larger than the JSON size limit",
        });
    }
    let mut parser = Parser { text, bytes: text.as_bytes(), pos: 0 };
    parser.skip_ws();
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("extra data after the JSON value"));
    }
    Ok(value)
}

/// Python's `json` string encoder with `ensure_ascii=False`.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    let mut run_start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[run_start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(escape);
        }
        run_start = i + 1;
    }
    out.push_str(&s[run_start..]);
    out.push('"');
}

/// Python's `float.__repr__` (shortest round-trip digits; fixed notation when the decimal
/// exponent lies in -4 < e <= 16, else `d.ddde±XX`), plus the encoder's spellings of the
/// non-finite values.
pub fn write_float(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    if x == 0.0 {
        out.push_str("0.0");
        return;
    }
    let (digits, exp) = crate::float_digits::shortest(libm::fabs(x));
    // Position of the decimal point relative to the digit string.
    let point = exp + 1;
    if point > -4 && point <= 16 {
        if point <= 0 {
            out.push_str("0.");
            push_zeros(out, (-point) as usize);
            out.push_str(&digits);
        } else if point as usize >= digits.len() {
            out.push_str(&digits);
            push_zeros(out, point as usize - digits.len());
            out.push_str(".0");
        } else {
            let (int_part, frac_part) = digits.split_at(point as usize);
            out.push_str(int_part);
            out.push('.');
            out.push_str(frac_part);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
    }
}

fn push_zeros(out: &mut String, n: usize) {
    out.extend(core::iter::repeat_n('0', n));
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, reason: &'static str) -> Error {
        Error::BadJson { offset: self.pos, reason }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// JSON whitespace only (Python's decoder does not accept other Unicode spaces).
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat_literal(&mut self, literal: &str) -> bool {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        match self.peek() {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => {
                if self.eat_literal("-Infinity") {
                    Ok(Value::Float(f64::NEG_INFINITY))
                } else {
                    self.number()
                }
            }
            Some(_) => {
                for (literal, value) in [
                    ("null", Value::Null),
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("NaN", Value::Float(f64::NAN)),
                    ("Infinity", Value::Float(f64::INFINITY)),
                ] {
                    if self.eat_literal(literal) {
                        return Ok(value);
                    }
                }
                Err(self.error("expected a JSON value"))
            }
        }
    }

    fn enter(&self, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            Err(self.error("nesting deeper than the JSON depth limit"))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']' in array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value> {
        self.enter(depth)?;
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key in object"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("expected ':' after object key"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth)?;
            members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(dedup_keys(members)));
                }
                _ => return Err(self.error("expected ',' or '}' in object")),
            }
        }
    }

    fn string(&mut self) -> Result<String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut run_start = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            match b {
                b'"' => {
                    out.push_str(&self.text[run_start..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[run_start..self.pos]);
                    self.pos += 1;
                    self.escape(&mut out)?;
                    run_start = self.pos;
                }
                0x00..=0x1f => return Err(self.error("control character in string")),
                _ => self.pos += 1,
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<()> {
        let Some(b) = self.peek() else {
            return Err(self.error("unterminated escape"));
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                let code = match unit {
                    0xd800..=0xdbff => {
                        if !self.eat_literal("\\u") {
                            return Err(self.error("lone UTF-16 surrogate in string"));
                        }
                        let low = self.hex4()?;
                        if !(0xdc00..=0xdfff).contains(&low) {
                            return Err(self.error("lone UTF-16 surrogate in string"));
                        }
                        0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                    }
                    0xdc00..=0xdfff => return Err(self.error("lone UTF-16 surrogate in string")),
                    _ => unit,
                };
                char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"))?
            }
            _ => {
                self.pos -= 1;
                return Err(self.error("invalid escape in string"));
            }
        };
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("truncated \\u escape"))?;
        let mut unit = 0;
        for &d in digits {
            let v = (d as char).to_digit(16).ok_or_else(|| self.error("invalid \\u escape"))?;
            unit = unit * 16 + v;
        }
        self.pos += 4;
        Ok(unit)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?` — Python's number pattern; anything
    /// after a maximal match (like the `1` of `01`) is left for the caller to reject.
    fn number(&mut self) -> Result<Value> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.error("expected a digit")),
        }
        let int_digits = self.pos - int_start;
        let mut is_float = false;
        if self.peek() == Some(b'.') && self.bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit)
        {
            self.pos += 1;
            self.skip_digits();
            is_float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            let mut p = self.pos + 1;
            if let Some(b'+' | b'-') = self.bytes.get(p) {
                p += 1;
            }
            if self.bytes.get(p).is_some_and(u8::is_ascii_digit) {
                self.pos = p;
                self.skip_digits();
                is_float = true;
            }
        }
        let literal = &self.text[start..self.pos];
        if is_float {
            // Correctly rounded, like CPython's parser; overflow gives infinity.
            let x = crate::float_parse::parse(literal)
                .ok_or(Error::BadJson { offset: start, reason: "invalid number" })?;
            return Ok(Value::Float(x));
        }
        if int_digits > MAX_INT_DIGITS {
            return Err(Error::BadJson {
                offset: start,
                reason: "integer longer than 4300 digits",
            });
        }
        Ok(Value::Int(if literal == "-0" { String::from("0") } else { String::from(literal) }))
    }

    fn skip_digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }
}

/// Dict semantics for repeated keys: first position, last value. Sorting an index keeps this
/// O(n log n) for hostile objects with many members.
fn dedup_keys(members: Vec<(String, Value)>) -> Vec<(String, Value)> {
    if members.len() < 2 {
        return members;
    }
    let mut order: Vec<usize> = (0..members.len()).collect();
    crate::sort::sort_by(&mut order, |&a, &b| members[a].0.cmp(&members[b].0).then(a.cmp(&b)));
    // For each member: None = dropped, Some(j) = take the value of member j.
    let mut source: Vec<Option<usize>> = (0..members.len()).map(Some).collect();
    let mut any_duplicate = false;
    let mut group = 0;
    while group < order.len() {
        let mut end = group + 1;
        while end < order.len() && members[order[end]].0 == members[order[group]].0 {
            end += 1;
        }
        if end - group > 1 {
            any_duplicate = true;
            source[order[group]] = Some(order[end - 1]);
            for &dropped in &order[group + 1..end] {
                source[dropped] = None;
            }
        }
        group = end;
    }
    if !any_duplicate {
        return members;
    }
    let mut slots: Vec<Option<(String, Value)>> = members.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for i in 0..slots.len() {
        if let Some(j) = source[i] {
            let key = slots[i].as_ref().map(|(k, _)| k.clone()).unwrap_or_default();
            let value = slots[j].take().map(|(_, v)| v).unwrap_or(Value::Null);
            out.push((key, value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn roundtrip(s: &str) -> String {
        parse(s).unwrap().to_json()
    }

    #[test]
    fn compact_rendering_keeps_key_order_and_raw_unicode() {
        assert_eq!(
            roundtrip(r#" { "z" : 1 , "a" : [ true , false , null ] , "é" : "😀\u00e9" } "#),
            "{\"z\":1,\"a\":[true,false,null],\"é\":\"😀é\"}"
        );
    }

    #[test]
    fn strings_are_escaped_like_python() {
        let s = "\"\\\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}/\u{2028}";
        let mut out = String::new();
        write_string(s, &mut out);
        assert_eq!(out, "\"\\\"\\\\\\n\\r\\t\\b\\f\\u0000\\u001f\u{7f}/\u{2028}\"");
    }

    #[test]
    fn floats_render_like_python_repr() {
        for (x, want) in [
            (1.0, "1.0"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1.5e20, "1.5e+20"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (123.456, "123.456"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            // Exactly halfway between the two 17-digit candidates: ties go to the even digit.
            (1962539299388703.0 + 0.25, "1962539299388703.2"),
            (1e23, "1e+23"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ] {
            let mut out = String::new();
            write_float(x, &mut out);
            assert_eq!(out, want, "{x:e}");
        }
    }

    #[test]
    fn numbers_keep_their_python_type_and_form() {
        assert_eq!(
            roundtrip("[-0,0,-0.0,1E5,1e999,123456789012345678901234567890]"),
            "[0,0,-0.0,100000.0,Infinity,123456789012345678901234567890]"
        );
        assert_eq!(roundtrip("[NaN,Infinity,-Infinity]"), "[NaN,Infinity,-Infinity]");
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        assert_eq!(roundtrip(r#"{"a":1,"b":2,"a":3,"c":4,"b":5}"#), r#"{"a":3,"b":5,"c":4}"#);
    }

    #[test]
    fn surrogate_pairs_combine_into_one_character() {
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap(), Value::String("😀".to_string()));
    }

    #[test]
    fn malformed_inputs_are_refused_with_bad_json() {
        let deep_open = "[".repeat(10_000);
        let deep_closed = "[".repeat(10_000) + &"]".repeat(10_000);
        let deep_objects = "{\"a\":".repeat(10_000) + "1" + &"}".repeat(10_000);
        let huge_int = "9".repeat(MAX_INT_DIGITS + 1);
        let cases: &[&str] = &[
            "",
            " ",
            "{",
            "[1,",
            "[1 2]",
            "{\"a\" 1}",
            "{\"a\":}",
            "{1:2}",
            "[1,]",
            "{\"a\":1,}",
            "\"abc",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\nb\"",
            "01",
            "1.",
            "1e",
            "-",
            "+1",
            ".5",
            "nul",
            "tru",
            "[1] x",
            "\u{feff}[]",
            "'a'",
            "Infinit",
            "-Inf",
            &deep_open,
            &deep_closed,
            &deep_objects,
            &huge_int,
        ];
        for case in cases {
            match parse(case) {
                Err(Error::BadJson { .. }) => {}
                other => panic!("{:?} gave {:?}", case.get(..40), other),
            }
        }
    }

    #[test]
    fn nesting_up_to_the_depth_limit_is_accepted() {
        let s = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert_eq!(roundtrip(&s), s);
        let over = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&over).is_err());
    }

    #[test]
    fn the_longest_python_integer_is_accepted() {
        let s = "7".repeat(MAX_INT_DIGITS);
        assert_eq!(roundtrip(&s), s);
    }

    #[test]
    fn truthiness_follows_python() {
        for (s, truthy) in [
            ("[]", false),
            ("{}", false),
            ("\"\"", false),
            ("0", false),
            ("0.0", false),
            ("null", false),
            ("false", false),
            ("[0]", true),
            ("NaN", true),
            ("-0", false),
        ] {
            assert_eq!(parse(s).unwrap().is_truthy(), truthy, "{s}");
        }
    }
}
