//! A patterned string's whole rule as one deterministic automaton over the bytes a raw JSON
//! string may hold: every pattern it must match (a schema's `pattern`, its `format`'s), and no
//! marker the response parser reads as structure ([`super::markers`]). Built once per schema by
//! subset construction over the patterns' Glushkov automata, then pruned to the states an end
//! is reachable from, so any prefix it takes can be finished. Each state also knows which
//! lengths can still end it, so `minLength`/`maxLength` are held exactly, and which byte heads
//! for the nearest end (what the closing writes, [`super::closing`]).
use alloc::vec;
use alloc::vec::Vec;

use super::markers::{self, Watch};
use super::pattern::Pattern;
use super::schema::Length;
use crate::{Error, Result};

/// States an automaton may have (one byte each; `DEAD` is none).
const MAX_STATES: usize = 255;
const DEAD: u8 = u8::MAX;
/// The bytes a raw string character may be: printable ASCII.
const FIRST: u8 = 0x20;
const BYTES: usize = 0x7f - FIRST as usize;
/// Lengths to an end tracked exactly (a bit each); past them only "any length" is known.
const EXACT: u32 = 128;

#[derive(Debug, Clone)]
pub struct StringDfa {
    /// `next[state * BYTES + b - FIRST]`.
    next: Vec<u8>,
    /// Bit `n`: an accepted string ends exactly `n` characters on.
    lengths: Vec<u128>,
    /// Accepted strings of every length past some point continue from here (a loop).
    unbounded: Vec<bool>,
}

impl StringDfa {
    pub const START: u8 = 0;

    /// The strings `pattern` (and `also`) matches, none spelling a marker.
    pub fn new(pattern: &Pattern, also: Option<&Pattern>) -> Result<StringDfa> {
        let patterns: [&Pattern; 2] = [pattern, also.unwrap_or(pattern)];
        let mut states = vec![([Pattern::START; 2], Watch::default())];
        let mut next = Vec::new();
        let mut i = 0;
        while i < states.len() {
            let (live, watch) = states[i];
            let reach = [0, 1].map(|k| patterns[k].reach(live[k]));
            for b in FIRST..FIRST + BYTES as u8 {
                let mut watch = watch;
                let to = [0, 1].map(|k| reach[k] & patterns[k].on(b));
                if to.contains(&0) || !watch.step(markers::IN_STRINGS, b) {
                    next.push(DEAD);
                    continue;
                }
                let key = (to, watch);
                let id = states.iter().position(|s| *s == key).unwrap_or(states.len());
                if id == states.len() {
                    if id == MAX_STATES {
                        return Err(Error::Unsupported {
                            what: "a pattern (with its format) of more than 255 automaton states",
                        });
                    }
                    states.push(key);
                }
                next.push(id as u8);
            }
            i += 1;
        }
        let accepts: Vec<bool> = states
            .iter()
            .map(|(live, _)| patterns.iter().zip(live).all(|(p, &s)| p.matches(s)))
            .collect();
        let mut dfa = StringDfa { next, lengths: Vec::new(), unbounded: Vec::new() };
        dfa.measure(&accepts);
        if dfa.lengths[0] == 0 && !dfa.unbounded[0] {
            return Err(Error::Unsupported {
                what: "a pattern (with its format) no string matches",
            });
        }
        Ok(dfa)
    }

    /// Fills `lengths` and `unbounded`, and cuts the moves into states no end is reachable from.
    fn measure(&mut self, accepts: &[bool]) {
        let n = accepts.len();
        let mut lengths: Vec<u128> = accepts.iter().map(|&a| a as u128).collect();
        // The longest way to an end, counted up to past `n` (then it loops).
        let mut longest: Vec<u32> = accepts.iter().map(|&a| if a { 0 } else { u32::MAX }).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for s in 0..n {
                let (mut bits, mut most) = (lengths[s], longest[s]);
                for &t in &self.next[s * BYTES..(s + 1) * BYTES] {
                    if t != DEAD && longest[t as usize] != u32::MAX {
                        bits |= lengths[t as usize] << 1;
                        let via = (longest[t as usize] + 1).min(n as u32 + 1);
                        most = if most == u32::MAX { via } else { most.max(via) };
                    }
                }
                changed |= bits != lengths[s] || most != longest[s];
                (lengths[s], longest[s]) = (bits, most);
            }
        }
        for t in self.next.iter_mut() {
            if *t != DEAD && longest[*t as usize] == u32::MAX {
                *t = DEAD;
            }
        }
        self.unbounded = longest.iter().map(|&l| l != u32::MAX && l > n as u32).collect();
        self.lengths = lengths;
    }

    /// How many states it has.
    pub fn states(&self) -> usize {
        self.lengths.len()
    }

    /// The state after byte `b`, if an end is still reachable.
    pub fn advance(&self, state: u8, b: u8) -> Option<u8> {
        let i = b.checked_sub(FIRST).filter(|&i| (i as usize) < BYTES)?;
        let t = self.next[state as usize * BYTES + i as usize];
        (t != DEAD).then_some(t)
    }

    /// Whether the string may end here, `chars` characters long.
    pub fn can_close(&self, state: u8, chars: u32, length: Length) -> bool {
        self.lengths[state as usize] & 1 == 1 && chars >= length.min
    }

    /// Whether an accepted string `chars` characters long so far can still end within `length`.
    pub fn fits(&self, state: u8, chars: u32, length: Length) -> bool {
        self.nearest(state, chars, length).is_some()
    }

    /// Characters to the nearest end within `length` (`EXACT` past the exact window).
    fn nearest(&self, state: u8, chars: u32, length: Length) -> Option<u32> {
        if chars > length.max {
            return None;
        }
        let (lo, hi) = (length.min.saturating_sub(chars), length.max - chars);
        let window = if lo >= EXACT {
            0
        } else {
            let below_hi = if hi >= EXACT - 1 { u128::MAX } else { (2u128 << hi) - 1 };
            self.lengths[state as usize] & below_hi & (u128::MAX << lo)
        };
        match window {
            0 if self.unbounded[state as usize] && length.max == u32::MAX => Some(EXACT),
            0 => None,
            w => Some(w.trailing_zeros()),
        }
    }

    /// The first byte on a shortest way to an end within `length` (`None` at an end).
    pub fn hint(&self, state: u8, chars: u32, length: Length) -> Option<u8> {
        let near = self.nearest(state, chars, length).filter(|&n| n > 0)?;
        (FIRST..FIRST + BYTES as u8).find(|&b| {
            self.advance(state, b).is_some_and(|t| {
                self.nearest(t, chars + 1, length).is_some_and(|m| m + 1 == near || near == EXACT)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dfa(sources: &[&str]) -> StringDfa {
        let patterns: Vec<Pattern> = sources.iter().map(|s| Pattern::compile(s).unwrap()).collect();
        StringDfa::new(&patterns[0], patterns.get(1)).unwrap()
    }

    fn takes(d: &StringDfa, text: &str, length: Length) -> bool {
        let end = text.bytes().enumerate().try_fold(StringDfa::START, |s, (i, b)| {
            d.advance(s, b).filter(|&t| d.fits(t, i as u32 + 1, length))
        });
        end.is_some_and(|s| d.can_close(s, text.len() as u32, length))
    }

    #[test]
    fn patterns_together_take_what_both_match() {
        let d = dfa(&["^[a-z]+@[a-z]+$", "^.{3,5}$"]);
        assert!(takes(&d, "a@b", Length::ANY) && takes(&d, "ab@cd", Length::ANY));
        assert!(!takes(&d, "ab@cde", Length::ANY) && !takes(&d, "a@", Length::ANY));
    }

    #[test]
    fn lengths_are_held_exactly_and_the_hint_heads_for_the_nearest_end() {
        let d = dfa(&["^(ab)*$"]);
        let three = Length { min: 3, max: 3 };
        assert!(!d.fits(StringDfa::START, 0, three), "no even string is 3 long");
        let four = Length { min: 3, max: 5 };
        assert!(takes(&d, "abab", four) && !takes(&d, "ab", four));
        let d = dfa(&["^[a-z]+@[a-z]+\\.[a-z]{2,}$"]);
        let mut text = alloc::string::String::from("jo");
        let mut s = "jo".bytes().fold(StringDfa::START, |s, b| d.advance(s, b).unwrap());
        while let Some(b) = d.hint(s, text.len() as u32, Length::ANY) {
            s = d.advance(s, b).unwrap();
            text.push(b as char);
        }
        assert_eq!(text.len(), "jo@a.aa".len(), "{text}");
        assert!(takes(&d, &text, Length::ANY), "{text}");
    }

    #[test]
    fn a_marker_is_never_spelled_and_a_pattern_that_needs_one_is_refused() {
        let d = dfa(&["^.*$"]);
        assert!(takes(&d, "a </tool_call <|im_end|", Length::ANY));
        assert!(!takes(&d, "a </tool_call>", Length::ANY));
        let forced = Pattern::compile("^<think>$").unwrap();
        assert!(matches!(StringDfa::new(&forced, None), Err(Error::Unsupported { .. })));
    }
}
