//! Extractive strings: a free-text argument that must be copied from the user's request.
//!
//! Small models slip when they re-spell a name or a phrase from the request ("popcorn" ->
//! "popcorning", a code read as another code). Requiring the value to be a piece of the
//! request turns those slips into the nearest copy the model prefers. A copy starts and ends at
//! word boundaries, so it cannot stop inside a word ("Q" of "QX7PLM") unless it reaches its
//! `maxLength`, and never starts or ends with whitespace (" called ..." for "called ..."). Matching is on the request as compact JSON writes it (so escapes line up byte
//! for byte) and ignores ASCII case.
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
    /// `may_start[p]`: a copied value may start at `p`, a character start not inside a word
    /// (letters, digits and non-ASCII characters make words) and not whitespace.
    may_start: Vec<bool>,
    /// `may_end[p]`: a copied value may end just before `p`, a character start not inside a
    /// word, after a character that is not whitespace.
    may_end: Vec<bool>,
    /// `end_ahead[p]`: some `may_end[q]` with `q >= p`, so a copy that has reached `p` can
    /// still close (a copy of trailing whitespace, "@ " of "@ ", has nowhere to end).
    end_ahead: Vec<bool>,
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
        let mut starts = Vec::with_capacity(bytes.len() + 1);
        let mut p = 0;
        while p < bytes.len() {
            starts.push(p);
            p += match (bytes[p], bytes.get(p + 1)) {
                (b'\\', Some(b'u')) => 6,
                (b'\\', _) => 2,
                (lead, _) => utf8_len(lead),
            };
        }
        let chars = starts.len() as u32;
        starts.push(bytes.len());
        let mut chars_from = alloc::vec![0u32; bytes.len() + 1];
        let mut may_start = alloc::vec![false; bytes.len() + 1];
        let mut may_end = alloc::vec![false; bytes.len() + 1];
        for (i, pair) in starts.windows(2).enumerate() {
            // A position inside a character counts the characters after it.
            chars_from[pair[0]..pair[1]].fill(chars - i as u32);
        }
        let word =
            |p: usize| p < bytes.len() && (bytes[p].is_ascii_alphanumeric() || bytes[p] >= 0x80);
        let space = |p: usize| {
            p < bytes.len() && matches!(&bytes[p..], [b' ', ..] | [b'\\', b'n' | b't' | b'r', ..])
        };
        for (i, &p) in starts.iter().enumerate() {
            let boundary = i == 0 || !(word(starts[i - 1]) && word(p));
            may_start[p] = boundary && !space(p);
            may_end[p] = boundary && i > 0 && !space(starts[i - 1]);
        }
        let mut end_ahead = may_end.clone();
        for p in (0..bytes.len()).rev() {
            end_ahead[p] |= end_ahead[p + 1];
        }
        Source { bytes, chars_from, may_start, may_end, end_ahead }
    }

    /// Whether any value can be copied at all: a request of nothing but whitespace (or
    /// nothing) has no piece to copy, and its strings are written freely instead of never.
    pub fn copyable(&self) -> bool {
        self.may_start[..self.bytes.len()].iter().any(|&s| s)
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

/// Where the value written so far sits in the request: its leftmost occurrence that starts at
/// a word boundary and can still reach the value's `minLength`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// The value extended by byte `b` (of its JSON body), or `None` when no piece of the
    /// request with room for `min` characters spells it and can still end after it.
    pub fn extend(self, source: &Source, b: u8, min: u32) -> Option<Span> {
        let b = b.to_ascii_lowercase();
        let next = self.len as usize;
        // The leftmost occurrence of the longer value starts at or after this one's.
        self.occurrences(source, 1)
            .find(|&s| {
                source.bytes[s + next] == b
                    && source.chars_from[s] >= min
                    && source.end_ahead[s + next + 1]
            })
            .map(|s| Span { start: s as u32, len: self.len + 1 })
    }

    /// Whether the value may close here: some occurrence of it ends at a word boundary after
    /// a character that is not whitespace, so a copy never stops mid-word ("Q" of "QX7PLM"),
    /// or `at_max`, its longest length.
    pub fn can_close(self, source: &Source, at_max: bool) -> bool {
        at_max || self.occurrences(source, 0).any(|s| source.may_end[s + self.len as usize])
    }

    /// Starts of the occurrences of the value where a copy may start, leftmost first, with
    /// `more` bytes of the request after them.
    fn occurrences(self, source: &Source, more: usize) -> impl Iterator<Item = usize> + '_ {
        let (start, len) = (self.start as usize, self.len as usize);
        let written = &source.bytes[start..start + len];
        let end = (source.bytes.len() + 1).saturating_sub(len + more);
        (start..end).filter(move |&s| source.may_start[s] && &source.bytes[s..s + len] == written)
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
        for value in [
            "call Mom",
            "CALL MOM",
            "call dad",
            "at 5pm",
            "m",
            "Remind me to call Mom at 5pm, then call Dad",
        ] {
            assert!(copy(&source, value, 1), "{value:?} is in the request");
        }
        for value in ["call Mum", "call Mom at 6pm", "popcorn", "Dad."] {
            assert!(!copy(&source, value, 1), "{value:?} is not in the request");
        }
    }

    /// Whether `value` is a copy that may also close there.
    fn closes(source: &Source, value: &str) -> bool {
        let span = value.bytes().try_fold(Span::default(), |span, b| span.extend(source, b, 0));
        span.is_some_and(|span| span.can_close(source, false))
    }

    #[test]
    fn copies_start_and_end_at_word_boundaries() {
        let source = Source::new("mail psharma@acme.io, code QX7PLM; these and the rest (ok)");
        for value in [
            "psharma@acme.io",
            "acme",
            "acme.io",
            "QX7PLM",
            "the",
            "the rest (ok)",
            "(ok",
            ", code",
        ] {
            assert!(closes(&source, value), "{value:?}");
        }
        assert!(!copy(&source, "sharma@acme.io", 0), "starts inside a word");
        assert!(copy(&source, "Q", 0) && !closes(&source, "Q"), "may not stop inside a word");
        assert!(!closes(&source, "these and th"));
        assert!(!copy(&source, " code", 0), "starts with whitespace");
        assert!(
            copy(&source, "code ", 0) && !closes(&source, "code "),
            "may not end with whitespace"
        );
        let trailing = Source::new("@ ");
        assert!(
            closes(&trailing, "@") && !copy(&trailing, "@ ", 0),
            "a copy that could never end (trailing whitespace) is refused"
        );
        let lines = Source::new("first\nsecond");
        assert!(
            !copy(&lines, "\\nsecond", 0) && copy(&lines, "second", 0),
            "an escaped newline is whitespace"
        );
        let span =
            "qx7".bytes().try_fold(Span::default(), |span, b| span.extend(&source, b, 0)).unwrap();
        assert!(span.can_close(&source, true), "at its longest a value closes wherever it is");
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
