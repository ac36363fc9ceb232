//! Substring search over bytes, for the few places that look for a marker or a word in text.
//!
//! core's `str` search (`find`, `split_once`, `match_indices`, `replace` with a `&str` pattern)
//! is the two-way `StrSearcher`, ~3 KB of wasm; the texts searched here (a reply, a system
//! prompt, a `$ref`) are short and the needles a few bytes, so trying each start is as fast.
//! A match of valid UTF-8 in valid UTF-8 starts and ends on char boundaries, so slicing the
//! text at one is sound.

/// Byte offsets at which `needle` (non-empty) starts in `text`, ascending; overlapping matches
/// included (core's `match_indices` skips those; the needles searched here cannot overlap).
pub fn positions<'a>(text: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    byte_positions(text.as_bytes(), needle.as_bytes())
}

/// `positions` over bytes that need not be UTF-8 (a partly decoded string's bytes).
pub fn byte_positions<'a>(text: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    (0..=text.len().saturating_sub(needle.len())).filter(move |&i| text[i..].starts_with(needle))
}

/// The byte offset of the first `needle` (non-empty) in `text`.
pub fn find(text: &str, needle: &str) -> Option<usize> {
    positions(text, needle).next()
}

/// `text` before and after the first `needle` (non-empty), like `str::split_once`.
pub fn split_once<'a>(text: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    find(text, needle).map(|at| (&text[..at], &text[at + needle.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn agrees_with_core_search() {
        let texts = ["", "a", "<think>", "x<think>y</think>z", "ééé<é>é", "aaaa", "date: date:"];
        let needles = ["<think>", "</think>", "a", "aa", "é>", "date:", "zzzzzzzzzzzzzz"];
        for text in texts {
            for needle in needles {
                assert_eq!(find(text, needle), text.find(needle), "{text:?} {needle:?}");
                assert_eq!(split_once(text, needle), text.split_once(needle));
                let windows =
                    text.as_bytes().windows(needle.len()).position(|w| w == needle.as_bytes());
                assert_eq!(byte_positions(text.as_bytes(), needle.as_bytes()).next(), windows);
            }
        }
    }

    #[test]
    fn positions_include_overlaps() {
        assert_eq!(positions("aaaa", "aa").collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(positions("ab", "abc").count(), 0);
    }
}
