//! Markers that free text in a completion (the reasoning, a JSON string) must never spell.
//!
//! The response parser ([`crate::response`]) reads them as structure wherever they stand in
//! the text: it ends the turn at the first `<|im_end|>`, opens the reasoning at the first
//! `<think>` and ends the call list at `</tool_call>`. Spelled inside a string argument (or
//! `<|im_end|>` inside the reasoning), each would lose the calls the matcher let the model
//! write, so the matcher refuses the byte that completes one.
use crate::prompt::{IM_END, THINK_START, TOOL_CALL_END};
use crate::text_search;

/// What no JSON string may hold.
pub(super) const IN_STRINGS: &[&str] = &[TOOL_CALL_END, IM_END, THINK_START];
/// What the reasoning may not hold (its `</think>` ends it; a second `<think>` or a
/// `<tool_call>` inside it reads as text).
pub(super) const IN_REASONING: &[&str] = &[IM_END];

/// Whether `text` holds a marker no string may hold.
pub(super) fn in_string(text: &[u8]) -> bool {
    IN_STRINGS.iter().any(|m| text_search::byte_positions(text, m.as_bytes()).next().is_some())
}

/// How far the text so far ends with one marker of a set. Every marker's only `<` is its first
/// byte and no two share a second byte, so a mismatch restarts at 0, or at 1 on a `<`, and the
/// byte after a `<` picks the marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Watch {
    which: u8,
    at: u8,
}

impl Watch {
    /// Takes byte `b`; `false` when it completes one of `set`.
    pub(super) fn step(&mut self, set: &[&str], b: u8) -> bool {
        let next = match self.at {
            0 => None,
            1 => set.iter().position(|m| m.as_bytes()[1] == b).map(|i| (i, 2)),
            at => {
                let which = self.which as usize;
                (set[which].as_bytes()[at as usize] == b).then_some((which, at as usize + 1))
            }
        };
        let (which, at) = next.unwrap_or((0, (b == b'<') as usize));
        if at == set[which].len() {
            return false;
        }
        *self = Watch { which: which as u8, at: at as u8 };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spells(set: &[&str], text: &str) -> bool {
        let mut w = Watch::default();
        !text.bytes().all(|b| w.step(set, b))
    }

    #[test]
    fn each_marker_is_caught_wherever_it_ends_and_nothing_else_is() {
        for set in [IN_STRINGS, IN_REASONING] {
            for (i, m) in set.iter().enumerate() {
                let b = m.as_bytes();
                assert!(b[0] == b'<' && !b[1..].contains(&b'<'), "{m}");
                assert!(set[..i].iter().all(|o| o.as_bytes()[1] != b[1]), "{m}");
                for text in [
                    alloc::string::String::from(*m),
                    alloc::format!("a <<{m}"),
                    alloc::format!("<|x</{m}"),
                ] {
                    assert!(spells(set, &text), "{text}");
                }
                let cut = &m[..m.len() - 1];
                assert!(!spells(set, &alloc::format!("{cut} {cut}x<{cut}")), "{m}");
            }
        }
        assert!(!spells(IN_REASONING, "</tool_call><think>"));
    }
}
