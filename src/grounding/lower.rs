//! Lowercasing for the grounding checks, without core's `to_lowercase` tables (11.7 KB of the
//! wasm module). The checks only ask of lowercased text whether a char is an ASCII letter or
//! digit, alphanumeric or whitespace, and whether it spells an ASCII (or `’`) cue, so only
//! chars whose lowercase holds ASCII need mapping: ASCII itself, the Kelvin sign and the
//! dotted capital I. Every other char keeps its case, which none of those questions sees (the
//! test below asks them of every char).
use alloc::string::String;

/// `text.to_lowercase()` as far as the grounding checks can tell.
pub(super) fn lower(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{212a}' => out.push('k'),
            '\u{130}' => out.push_str("i\u{307}"),
            c => out.push(c.to_ascii_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// What the checks ask of a char (grounding/mod.rs `negates`, years.rs `Text`).
    fn seen(text: &str) -> Vec<[bool; 5]> {
        text.chars()
            .map(|c| {
                [
                    c.is_alphanumeric() || c == '_',
                    c.is_whitespace(),
                    c.is_ascii_digit(),
                    c.is_ascii_alphanumeric(),
                    c == '\u{2019}',
                ]
            })
            .collect()
    }

    #[test]
    fn every_char_looks_to_the_checks_as_its_true_lowercase() {
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            let (ours, core) =
                (lower(c.encode_utf8(&mut [0; 4])), c.to_lowercase().collect::<String>());
            let ascii = |s: &str| s.chars().filter(char::is_ascii).collect::<String>();
            assert_eq!(ascii(&ours), ascii(&core), "{c:?}");
            assert_eq!(seen(&ours), seen(&core), "{c:?}");
        }
    }

    #[test]
    fn words_and_cues_lowercase() {
        assert_eq!(
            lower("Don\u{2019}t SEND it in JUNE 2024, \u{212a}ELVIN \u{130}"),
            "don\u{2019}t send it in june 2024, kelvin i\u{307}"
        );
    }
}
