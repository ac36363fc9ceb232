//! Extractive strings: a free-text argument that must be copied from the user's request.
//!
//! Small models slip when they re-spell a name or a phrase from the request ("popcorn" ->
//! "popcorning", a code read as another code). Requiring the value to be a piece of the
//! request turns those slips into the nearest copy the model prefers. Matching is on the
//! request as compact JSON writes it (so escapes line up byte for byte) and ignores ASCII case.
use alloc::string::String;
use alloc::vec::Vec;

use crate::json;

/// The request text a value may be copied from.
#[derive(Debug, Clone)]
pub struct Source {
    /// The request's JSON string body (no quotes), ASCII lower-cased.
    bytes: Vec<u8>,
    /// `chars_from[p]`: characters (as a JSON string counts them) in `bytes[p..]`.
    chars_from: Vec<u32>,
}

impl Source {
    pub fn new(text: &str) -> Source {
        let mut quoted = String::new();
        json::write_string(text, &mut quoted);
        let mut bytes = quoted.into_bytes();
        bytes.pop();
        bytes.remove(0);
        bytes.make_ascii_lowercase();
        // A character is a raw UTF-8 sequence or an escape (`\u` and four hex digits, or two bytes).
        let mut starts = Vec::with_capacity(bytes.len());
        let mut p = 0;
        while p < bytes.len() {
            starts.push(p);
            p += match (bytes[p], bytes.get(p + 1)) {
                (b'\\', Some(b'u')) => 6,
                (b'\\', _) => 2,
                (lead, _) => utf8_len(lead),
            };
        }
        let mut chars_from = alloc::vec![0u32; bytes.len() + 1];
        let mut count = starts.len() as u32;
        let mut next = starts.iter().peekable();
        for (p, slot) in chars_from.iter_mut().enumerate() {
            // A position inside a character counts the characters after it.
            *slot = count;
            if next.peek() == Some(&&p) {
                next.next();
                count -= 1;
            }
        }
        Source { bytes, chars_from }
    }

    /// Characters in the whole request.
    pub fn chars(&self) -> u32 {
        self.chars_from[0]
    }
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

/// Where the value written so far sits in the request: its leftmost occurrence that can still
/// reach the value's `minLength`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// The value extended by byte `b` (of its JSON body), or `None` when no piece of the
    /// request with room for `min` characters spells it.
    pub fn extend(self, source: &Source, b: u8, min: u32) -> Option<Span> {
        let (start, len) = (self.start as usize, self.len as usize);
        let written = &source.bytes[start..start + len];
        let b = b.to_ascii_lowercase();
        // The leftmost occurrence of the longer value starts at or after this one's.
        (start..source.bytes.len().saturating_sub(len))
            .find(|&s| {
                source.bytes[s + len] == b && source.chars_from[s] >= min && &source.bytes[s..s + len] == written
            })
            .map(|s| Span { start: s as u32, len: self.len + 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(source: &Source, value: &str, min: u32) -> bool {
        value.bytes().try_fold(Span::default(), |span, b| span.extend(source, b, min)).is_some()
    }

    #[test]
    fn pieces_of_the_request_pass_and_others_do_not() {
        let source = Source::new("Remind me to call Mom at 5pm, then call Dad");
        for value in ["call Mom", "CALL MOM", "call dad", "at 5pm", "m", "Remind me to call Mom at 5pm, then call Dad"] {
            assert!(copy(&source, value, 1), "{value:?} is in the request");
        }
        for value in ["call Mum", "call Mom at 6pm", "popcorn", "Dad."] {
            assert!(!copy(&source, value, 1), "{value:?} is not in the request");
        }
    }

    #[test]
    fn a_later_occurrence_is_found_when_the_first_stops_matching() {
        // "th" first occurs in "the"; only the occurrence in "this" continues with "is".
        let source = Source::new("the note says this");
        assert!(copy(&source, "this", 1));
    }

    #[test]
    fn escapes_match_as_compact_json_writes_them() {
        let source = Source::new("say \"hi\"\nto é");
        assert!(copy(&source, r#"say \"hi\"\nto é"#, 1));
        assert!(!copy(&source, "say \"hi", 1), "a raw quote is not the request's escaped one");
        assert_eq!(source.chars(), 13);
    }

    #[test]
    fn an_occurrence_too_close_to_the_end_for_min_length_is_skipped() {
        let source = Source::new("ab xx ab");
        // Both "ab"s spell "a"; with min 4 only the first leaves room for four characters.
        assert!(copy(&source, "ab x", 4));
        assert!(!copy(&source, "b", 8), "no occurrence of b has eight characters after it");
        assert!(copy(&source, "a", 8));
    }
}
