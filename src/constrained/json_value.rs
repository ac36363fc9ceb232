//! One JSON value, byte by byte: strings (escapes, well-formed UTF-8), numbers, literals and
//! nested arrays/objects. The value's schema kind restricts only its first byte (and keeps an
//! `integer` free of fraction and exponent, and a `string` within its length bounds); what is
//! nested inside arrays and objects is free. An extractive top-level string must also be a
//! piece of the request ([`super::span`]).
//!
//! A number has no closing byte: it ends at the first byte that cannot continue it, which
//! [`Step::DoneReprocess`] hands back to the caller.
use super::markers::{self, Watch};
use super::schema::{JsonType, Length};
use super::span::{Source, Span};

/// Nesting depth of arrays/objects inside one value (one bit each in `JsonValue::stack`).
const MAX_DEPTH: u8 = 32;
/// Longest number accepted, in bytes: a model repeating a digit cannot loop forever here.
const MAX_NUMBER: u8 = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Consumed,
    Rejected,
    /// The value is complete with this byte.
    Done,
    /// The value was complete before this byte, which belongs to what follows.
    DoneReprocess,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Number {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
    /// Two exponent digits: no more, so no number reads as infinity.
    Exp2,
}

impl Number {
    fn accepting(self) -> bool {
        matches!(self, Number::Zero | Number::Int | Number::Frac | Number::Exp | Number::Exp2)
    }

    fn next(self, b: u8, integer_only: bool) -> Option<Number> {
        let digit = b.is_ascii_digit();
        Some(match (self, b) {
            (Number::Minus, b'0') => Number::Zero,
            (Number::Minus, _) if digit => Number::Int,
            (Number::Int, _) if digit => Number::Int,
            (Number::Zero | Number::Int, b'.') if !integer_only => Number::Dot,
            (Number::Zero | Number::Int | Number::Frac, b'e' | b'E') if !integer_only => Number::E,
            (Number::Dot | Number::Frac, _) if digit => Number::Frac,
            (Number::E, b'+' | b'-') => Number::ESign,
            (Number::E | Number::ESign, _) if digit => Number::Exp,
            (Number::Exp, _) if digit => Number::Exp2,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A value starts here (whitespace allowed first).
    Value,
    /// After `[`: a value or `]`.
    ArrayStart,
    /// After `{`: a key or `}`.
    ObjectStart,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the container's close.
    After,
    /// Inside a string, with what its open character still needs.
    Str {
        key: bool,
        open: Open,
    },
    Num {
        state: Number,
        len: u8,
    },
    Word {
        word: &'static [u8],
        at: u8,
    },
}

/// What the character a string has open still needs: only strings the crate's JSON parser (and
/// any other) reads back get through, so no overlong or surrogate UTF-8 form, no code point past
/// U+10FFFF, and no `\u` surrogate without its other half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// Between characters.
    None,
    /// After `\`: the escaped character.
    Escape,
    /// `\u` and `read` of its four hex digits (their value `hex`); `low`: it must be the low
    /// half of a surrogate pair.
    Hex { read: u8, hex: u16, low: bool },
    /// After a high surrogate's escape: its low half's `\` (`u: false`), then its `u`.
    LowHalf { u: bool },
    /// A UTF-8 sequence with `due` continuation bytes to come, the next within `lo..=hi`.
    Utf8 { due: u8, lo: u8, hi: u8 },
}

impl Open {
    /// What a character that starts with byte `b` (not a quote, a control or a stray byte)
    /// still needs.
    fn starting(b: u8) -> Open {
        match b {
            b'\\' => Open::Escape,
            0xc2..=0xdf => Open::Utf8 { due: 1, lo: 0x80, hi: 0xbf },
            // The second byte keeps out overlong forms (E0, F0), UTF-16 surrogates (ED) and
            // code points past U+10FFFF (F4).
            0xe0 => Open::Utf8 { due: 2, lo: 0xa0, hi: 0xbf },
            0xed => Open::Utf8 { due: 2, lo: 0x80, hi: 0x9f },
            0xe1..=0xef => Open::Utf8 { due: 2, lo: 0x80, hi: 0xbf },
            0xf0 => Open::Utf8 { due: 3, lo: 0x90, hi: 0xbf },
            0xf4 => Open::Utf8 { due: 3, lo: 0x80, hi: 0x8f },
            0xf1..=0xf3 => Open::Utf8 { due: 3, lo: 0x80, hi: 0xbf },
            _ => Open::None,
        }
    }
}

/// A JSON value in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonValue {
    phase: Phase,
    /// Open containers, innermost in bit 0 (1: object).
    stack: u32,
    depth: u8,
    /// Restrictions of the top-level value (`None`: any).
    kind: Option<JsonType>,
    /// Bounds on a top-level string, and the characters it has so far.
    length: Length,
    chars: u32,
    /// Where a top-level extractive string sits in the request (`None`: not extractive).
    span: Option<Span>,
    /// How far the open string's text ends with a marker no string may hold
    /// ([`markers::IN_STRINGS`]).
    marker: Watch,
}

impl JsonValue {
    pub fn new(kind: Option<JsonType>, length: Length) -> JsonValue {
        JsonValue {
            phase: Phase::Value,
            stack: 0,
            depth: 0,
            kind,
            length,
            chars: 0,
            span: None,
            marker: Watch::default(),
        }
    }

    /// The same value, which if a string must be copied from the request.
    pub fn extractive(self) -> JsonValue {
        JsonValue { span: Some(Span::default()), ..self }
    }

    /// A top-level string character starts: refused once the string is at its longest.
    fn count_char(&mut self) -> bool {
        if self.depth > 0 {
            return true;
        }
        if self.chars >= self.length.max {
            return false;
        }
        self.chars += 1;
        true
    }

    /// Whether this byte may start the value (JSON whitespace aside).
    fn starts(&self, b: u8) -> bool {
        if self.depth > 0 {
            return true;
        }
        match self.kind {
            None => true,
            Some(JsonType::String) => b == b'"',
            Some(JsonType::Integer | JsonType::Number) => b == b'-' || b.is_ascii_digit(),
            Some(JsonType::Boolean) => b == b't' || b == b'f',
            Some(JsonType::Array) => b == b'[',
            Some(JsonType::Object) => b == b'{',
        }
    }

    fn integer_only(&self) -> bool {
        self.depth == 0 && self.kind == Some(JsonType::Integer)
    }

    /// Takes byte `b`; `source` is the request an extractive string copies from.
    pub fn step(&mut self, b: u8, source: Option<&Source>) -> Step {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        match self.phase {
            Phase::Value | Phase::ArrayStart => {
                if ws {
                    return Step::Consumed;
                }
                if self.phase == Phase::ArrayStart && b == b']' {
                    return self.close();
                }
                if !self.starts(b) {
                    return Step::Rejected;
                }
                self.begin(b)
            }
            Phase::ObjectStart | Phase::Key => match b {
                _ if ws => Step::Consumed,
                b'"' => {
                    self.phase = Phase::Str { key: true, open: Open::None };
                    Step::Consumed
                }
                b'}' if self.phase == Phase::ObjectStart => self.close(),
                _ => Step::Rejected,
            },
            Phase::Colon => match b {
                _ if ws => Step::Consumed,
                b':' => {
                    self.phase = Phase::Value;
                    Step::Consumed
                }
                _ => Step::Rejected,
            },
            Phase::After => {
                let in_object = self.stack & 1 == 1;
                match b {
                    _ if ws => Step::Consumed,
                    b',' => {
                        self.phase = if in_object { Phase::Key } else { Phase::Value };
                        Step::Consumed
                    }
                    b'}' if in_object => self.close(),
                    b']' if !in_object => self.close(),
                    _ => Step::Rejected,
                }
            }
            Phase::Str { key, open } => {
                let closing = b == b'"' && open == Open::None;
                if closing {
                    self.marker = Watch::default();
                } else if !self.marker.step(markers::IN_STRINGS, b) {
                    return Step::Rejected;
                }
                if let (false, 0, Some(span), Some(source)) = (key, self.depth, self.span, source) {
                    if closing && !span.can_close(source, self.chars >= self.length.max) {
                        return Step::Rejected;
                    }
                    if !closing {
                        match span.extend(source, b, self.length.min) {
                            Some(span) => self.span = Some(span),
                            None => return Step::Rejected,
                        }
                    }
                }
                self.string(b, key, open)
            }
            Phase::Num { state, len } => match state.next(b, self.integer_only()) {
                Some(_) if len >= MAX_NUMBER => Step::Rejected,
                Some(next) => {
                    self.phase = Phase::Num { state: next, len: len + 1 };
                    Step::Consumed
                }
                None if state.accepting() => match self.finish_value() {
                    Step::Done => Step::DoneReprocess,
                    // Inside a container the terminating byte is the container's business.
                    _ => self.step(b, source),
                },
                None => Step::Rejected,
            },
            Phase::Word { word, at } => {
                if word.get(at as usize) != Some(&b) {
                    return Step::Rejected;
                }
                if at as usize + 1 == word.len() {
                    return self.finish_value();
                }
                self.phase = Phase::Word { word, at: at + 1 };
                Step::Consumed
            }
        }
    }

    fn begin(&mut self, b: u8) -> Step {
        self.phase = match b {
            b'"' => Phase::Str { key: false, open: Open::None },
            b'-' => Phase::Num { state: Number::Minus, len: 1 },
            b'0' => Phase::Num { state: Number::Zero, len: 1 },
            b'1'..=b'9' => Phase::Num { state: Number::Int, len: 1 },
            b't' => Phase::Word { word: b"true", at: 1 },
            b'f' => Phase::Word { word: b"false", at: 1 },
            b'n' => Phase::Word { word: b"null", at: 1 },
            b'[' | b'{' => {
                if self.depth >= MAX_DEPTH {
                    return Step::Rejected;
                }
                let object = b == b'{';
                self.stack = (self.stack << 1) | object as u32;
                self.depth += 1;
                if object {
                    Phase::ObjectStart
                } else {
                    Phase::ArrayStart
                }
            }
            _ => return Step::Rejected,
        };
        Step::Consumed
    }

    fn string(&mut self, b: u8, key: bool, open: Open) -> Step {
        let open = match open {
            Open::None => {
                match b {
                    b'"' if key => {
                        self.phase = Phase::Colon;
                        return Step::Consumed;
                    }
                    b'"' if self.depth == 0 && self.chars < self.length.min => {
                        return Step::Rejected
                    }
                    b'"' => return self.finish_value(),
                    0x00..=0x1f | 0x7f | 0x80..=0xc1 | 0xf5..=0xff => return Step::Rejected,
                    _ => {}
                }
                if !self.count_char() {
                    return Step::Rejected;
                }
                Open::starting(b)
            }
            Open::Utf8 { due, lo, hi } if (lo..=hi).contains(&b) => match due {
                1 => Open::None,
                _ => Open::Utf8 { due: due - 1, lo: 0x80, hi: 0xbf },
            },
            Open::Escape => match b {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Open::None,
                b'u' => Open::Hex { read: 0, hex: 0, low: false },
                _ => return Step::Rejected,
            },
            Open::LowHalf { u: false } if b == b'\\' => Open::LowHalf { u: true },
            Open::LowHalf { u: true } if b == b'u' => Open::Hex { read: 0, hex: 0, low: true },
            Open::Hex { read, hex, low } => {
                let Some(digit) = (b as char).to_digit(16) else {
                    return Step::Rejected;
                };
                let hex = (hex << 4) | digit as u16;
                // Decided by the first two digits: a low half (DC-DF) exactly where one is due.
                let fits = match (read, low) {
                    (0, true) => hex == 0xd,
                    (1, _) => (0xdc..=0xdf).contains(&hex) == low,
                    _ => true,
                };
                match (fits, read) {
                    (false, _) => return Step::Rejected,
                    (_, 3) if (0xd800..=0xdbff).contains(&hex) => Open::LowHalf { u: false },
                    (_, 3) => Open::None,
                    _ => Open::Hex { read: read + 1, hex, low },
                }
            }
            Open::Utf8 { .. } | Open::LowHalf { .. } => return Step::Rejected,
        };
        self.phase = Phase::Str { key, open };
        Step::Consumed
    }

    fn close(&mut self) -> Step {
        self.stack >>= 1;
        self.depth -= 1;
        self.finish_value()
    }

    /// A scalar or container just ended: the whole value is done at the top level, otherwise
    /// its container continues.
    fn finish_value(&mut self) -> Step {
        if self.depth == 0 {
            return Step::Done;
        }
        self.phase = Phase::After;
        Step::Consumed
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;

    /// Feeds `text` followed by `,`; returns whether the value completed exactly at the end
    /// of `text`.
    fn value(kind: Option<JsonType>, text: &str) -> bool {
        let mut v = JsonValue::new(kind, Length::ANY);
        for (i, b) in text.bytes().enumerate() {
            match v.step(b, None) {
                Step::Consumed => {}
                Step::Done => return i + 1 == text.len(),
                Step::Rejected | Step::DoneReprocess => return false,
            }
        }
        v.step(b',', None) == Step::DoneReprocess
    }

    #[test]
    fn no_string_spells_the_end_of_the_call_list() {
        for kind in [Some(JsonType::String), Some(JsonType::Object), None] {
            let wrap = |s: &str| {
                if kind == Some(JsonType::Object) {
                    alloc::format!("{{\"k\":{s}}}")
                } else {
                    s.into()
                }
            };
            assert!(!value(kind, &wrap(r#""a </tool_call> b""#)), "{kind:?}");
            assert!(value(kind, &wrap(r#""a </tool_cal> <</tool_callx </tool_call""#)), "{kind:?}");
        }
        assert!(!value(Some(JsonType::Object), r#"{"</tool_call>":1}"#));
    }

    #[test]
    fn well_formed_values_of_each_kind_complete() {
        assert!(value(Some(JsonType::String), r#""a \"q\" \u00e9 é ☃ 😀""#));
        assert!(value(Some(JsonType::Integer), "-120"));
        assert!(value(Some(JsonType::Integer), "0"));
        assert!(value(Some(JsonType::Number), "12.50"));
        assert!(value(Some(JsonType::Number), "-0.5e+3"));
        assert!(value(Some(JsonType::Boolean), "false"));
        assert!(value(Some(JsonType::Array), r#"[1, "x", [], {"k": [true, null]}]"#));
        assert!(value(Some(JsonType::Object), r#"{ "a" : {"b": []}, "c": -1.0 }"#));
        assert!(value(None, "null"));
        assert!(value(None, " 7"));
    }

    #[test]
    fn values_that_break_json_or_the_kind_are_rejected() {
        for (kind, text) in [
            (Some(JsonType::String), "12"),
            (Some(JsonType::String), "\"a\nb\""),
            (Some(JsonType::String), "\"\\x\""),
            (Some(JsonType::String), "\"\\u12g4\""),
            (Some(JsonType::Integer), "1.5"),
            (Some(JsonType::Integer), "01"),
            (Some(JsonType::Integer), "-"),
            (Some(JsonType::Number), "1."),
            (Some(JsonType::Number), "\"1\""),
            (Some(JsonType::Boolean), "tru"),
            (Some(JsonType::Array), "{}"),
            (Some(JsonType::Array), "[1,]"),
            (Some(JsonType::Object), "{\"a\"}"),
            (Some(JsonType::Object), "{1: 2}"),
        ] {
            assert!(!value(kind, text), "{kind:?} accepted {text:?}");
        }
    }

    #[test]
    fn malformed_utf8_inside_strings_is_rejected() {
        for bytes in [&[b'"', 0xff, b'"'][..], &[b'"', 0xc3, b'"'], &[b'"', 0x80, b'"']] {
            let mut v = JsonValue::new(Some(JsonType::String), Length::ANY);
            assert!(bytes.iter().any(|&b| v.step(b, None) == Step::Rejected));
        }
    }

    /// Whether the matcher takes `bytes` as one whole string value.
    fn whole_string(bytes: &[u8]) -> bool {
        let mut v = JsonValue::new(Some(JsonType::String), Length::ANY);
        let (last, body) = bytes.split_last().unwrap();
        body.iter().all(|&b| v.step(b, None) == Step::Consumed) && v.step(*last, None) == Step::Done
    }

    #[test]
    fn raw_utf8_is_taken_exactly_when_it_is_well_formed() {
        // Every lead byte with every second byte (where UTF-8's rules live), completed with
        // continuation bytes: taken exactly when Rust's own decoder takes it.
        for lead in 0x80..=0xffu8 {
            for second in 0..=0xffu8 {
                let len = match lead {
                    0xf0.. => 4,
                    0xe0.. => 3,
                    _ => 2,
                };
                let mut bytes = alloc::vec![b'"', lead, second];
                bytes.resize(len + 1, 0x80);
                bytes.push(b'"');
                let valid = core::str::from_utf8(&bytes).is_ok() && second >= 0x80;
                assert_eq!(whole_string(&bytes), valid, "{lead:02x} {second:02x}");
            }
        }
        assert!(whole_string("\"\u{10ffff}\u{d7ff}\u{e000}\u{10000}\"".as_bytes()));
    }

    #[test]
    fn an_escaped_surrogate_is_taken_only_as_half_of_a_pair() {
        // The crate's parser is the oracle: what the matcher takes, it reads back.
        let parses = |text: &str| crate::json::parse(text).is_ok();
        for h in 0..=0xffffu32 {
            let text = alloc::format!("\"\\u{h:04x}\"");
            assert_eq!(whole_string(text.as_bytes()), parses(&text), "{text}");
            assert_eq!(parses(&text), !(0xd800..=0xdfff).contains(&h), "{text}");
        }
        for high in ["d800", "D83D", "dbff"] {
            for x in 0..=0xffffu32 {
                let text = alloc::format!("\"\\u{high}\\u{x:04X}\"");
                assert_eq!(whole_string(text.as_bytes()), (0xdc00..=0xdfff).contains(&x), "{text}");
                assert_eq!(whole_string(text.as_bytes()), parses(&text), "{text}");
            }
            for tail in ["\"", "x\"", "\\n\"", "\\u0041\""] {
                let text = alloc::format!("\"\\u{high}{tail}");
                assert!(!whole_string(text.as_bytes()) && !parses(&text), "{text}");
            }
        }
        // A pair is one character, as JSON Schema counts (the low half opens none).
        let mut v = JsonValue::new(Some(JsonType::String), Length { min: 1, max: 1 });
        let steps: Vec<Step> = br#""\ud83d\ude00""#.iter().map(|&b| v.step(b, None)).collect();
        assert_eq!(steps.last(), Some(&Step::Done));
    }

    #[test]
    fn a_string_keeps_within_its_length_bounds() {
        let length = Length { min: 2, max: 4 };
        let feed = |text: &str| {
            let mut v = JsonValue::new(Some(JsonType::String), length);
            text.bytes().map(|b| v.step(b, None)).collect::<Vec<_>>()
        };
        // Characters, not bytes: "é☃" is two characters in five bytes; an escape counts one.
        assert_eq!(feed("\"é☃\"").last(), Some(&Step::Done));
        assert_eq!(feed(r#""a\"bc""#).last(), Some(&Step::Done));
        assert_eq!(feed("\"a\"").last(), Some(&Step::Rejected), "shorter than minLength");
        let long = feed("\"abcde");
        assert_eq!(long[..5], [Step::Consumed; 5]);
        assert_eq!(long[5], Step::Rejected, "the fifth character passes maxLength");
        // Strings nested in an array are not the bounded value.
        let mut v = JsonValue::new(None, length);
        assert!(r#"["abcdef"]"#.bytes().all(|b| v.step(b, None) != Step::Rejected));
    }

    #[test]
    fn nesting_and_numbers_are_bounded() {
        let mut v = JsonValue::new(None, Length::ANY);
        let opened = (0..64).take_while(|_| v.step(b'[', None) == Step::Consumed).count();
        assert_eq!(opened, MAX_DEPTH as usize);
        let mut n = JsonValue::new(Some(JsonType::Integer), Length::ANY);
        let digits = (0..100).take_while(|_| n.step(b'7', None) == Step::Consumed).count();
        assert_eq!(digits, MAX_NUMBER as usize);
        // At most 40 digits and an exponent of two: far inside an f64's range.
        assert!(value(Some(JsonType::Number), "-9.5e+99") && !value(None, "1e308"));
    }
}
