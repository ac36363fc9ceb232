//! A JSON Schema `pattern` the matcher can hold: a regular expression over printable ASCII
//! (literals, `.`, classes, `\d \w \s` and their negations, groups, `|`, `* + ? {n,m}`, `^` and
//! `$` at the ends), compiled by Glushkov's construction to at most 127 positions, so a set of
//! live positions is a `u128`. Unanchored ends match anything there, as JSON Schema says. The
//! string is written raw: printable ASCII without `"` or `\`, one byte a character. Anything
//! else (backreferences, lookaround, non-ASCII) is refused with a typed error. The matcher runs
//! the deterministic automaton [`super::dfa`] builds from these.
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use crate::{Error, Result};

/// Positions a pattern may compile to (bit 0 of the state is the start).
const MAX_POSITIONS: usize = 127;
/// Repetition bounds written out by copying, at most this many times.
const MAX_REPEAT: u32 = 32;

/// A set of bytes (ASCII only).
type Class = u128;
/// A set of positions.
type Positions = u128;

fn unsupported(what: &'static str) -> Error {
    Error::Unsupported { what }
}

/// Bytes a pattern string may hold.
const PRINTABLE: Class = {
    let mut set: Class = 0;
    let mut b = 0x20;
    while b < 0x7f {
        if b != b'"' && b != b'\\' {
            set |= 1 << b;
        }
        b += 1;
    }
    set
};

#[derive(Debug, Clone)]
enum Ast {
    Empty,
    Atom(Class),
    Concat(Vec<Ast>),
    Alt(Vec<Ast>),
    Repeat(Box<Ast>, u32, Option<u32>),
    Star(Box<Ast>),
}

#[derive(Debug, Clone)]
pub struct Pattern {
    /// `follow[p]`: positions that may come after `p` (`follow[0]`: the first positions).
    follow: Vec<Positions>,
    /// `on[b]`: the positions whose class holds byte `b`.
    on: Vec<Positions>,
    /// Positions a match may end on (bit 0: the empty string matches).
    last: Positions,
}

impl Pattern {
    pub fn compile(source: &str) -> Result<Pattern> {
        let bytes = source.as_bytes();
        let (start, end) =
            (bytes.first() == Some(&b'^'), bytes.last() == Some(&b'$') && !escaped_end(bytes));
        let body = &bytes[start as usize..bytes.len() - end as usize];
        let mut parser = Parser { bytes: body, at: 0 };
        let ast = parser.alternation()?;
        if parser.at != body.len() {
            return Err(unsupported("pattern syntax (an unmatched ')')"));
        }
        let anything = || Ast::Star(Box::new(Ast::Atom(PRINTABLE)));
        let mut parts = Vec::new();
        if !start {
            parts.push(anything());
        }
        parts.push(ast);
        if !end {
            parts.push(anything());
        }
        Glushkov::build(&Ast::Concat(parts))
    }

    pub const START: Positions = 1;

    /// The positions any byte may lead to from `state` (those byte `b` leads to: masked by
    /// [`Self::on`]).
    pub fn reach(&self, state: Positions) -> Positions {
        bits(state).fold(0, |next, p| next | self.follow[p])
    }

    /// Positions whose class holds `b` (none for bytes a raw string cannot hold).
    pub fn on(&self, b: u8) -> Positions {
        self.on.get(b as usize).copied().unwrap_or(0)
    }

    pub fn matches(&self, state: Positions) -> bool {
        state & self.last != 0
    }
}

fn escaped_end(bytes: &[u8]) -> bool {
    let backslashes = bytes[..bytes.len() - 1].iter().rev().take_while(|&&b| b == b'\\').count();
    backslashes % 2 == 1
}

fn bits(mut set: Positions) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        let p = set.trailing_zeros() as usize;
        set &= set.checked_sub(1)?;
        Some(p)
    })
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Result<u8> {
        let b = self.peek().ok_or(unsupported("pattern syntax (it ends early)"))?;
        self.at += 1;
        Ok(b)
    }

    fn alternation(&mut self) -> Result<Ast> {
        let mut options = vec![self.concatenation()?];
        while self.peek() == Some(b'|') {
            self.at += 1;
            options.push(self.concatenation()?);
        }
        Ok(if options.len() == 1 { options.pop().unwrap_or(Ast::Empty) } else { Ast::Alt(options) })
    }

    fn concatenation(&mut self) -> Result<Ast> {
        let mut items = Vec::new();
        while let Some(b) = self.peek() {
            if b == b'|' || b == b')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(Ast::Concat(items))
    }

    fn atom(&mut self) -> Result<Ast> {
        Ok(match self.next()? {
            b'(' => {
                if self.peek() == Some(b'?') {
                    self.at += 1;
                    if self.next()? != b':' {
                        return Err(unsupported("pattern lookaround or named groups"));
                    }
                }
                let inner = self.alternation()?;
                if self.next()? != b')' {
                    return Err(unsupported("pattern syntax (an unclosed group)"));
                }
                inner
            }
            b'[' => Ast::Atom(self.class()?),
            b'.' => Ast::Atom(PRINTABLE),
            b'\\' => Ast::Atom(self.escape()?),
            b'^' | b'$' => return Err(unsupported("pattern anchors other than at its ends")),
            b'*' | b'+' | b'?' | b'{' => {
                return Err(unsupported("pattern syntax (a quantifier with nothing before it)"))
            }
            b if b.is_ascii() && !b.is_ascii_control() => Ast::Atom(1 << b),
            _ => return Err(unsupported("pattern characters outside printable ASCII")),
        })
    }

    fn escape(&mut self) -> Result<Class> {
        let digits: Class = (b'0'..=b'9').fold(0, |s, b| s | 1 << b);
        let word = (b'a'..=b'z').chain(b'A'..=b'Z').fold(digits | 1 << b'_', |s, b| s | 1 << b);
        let space: Class = 1 << b' ';
        Ok(match self.next()? {
            b'd' => digits,
            b'D' => PRINTABLE & !digits,
            b'w' => word,
            b'W' => PRINTABLE & !word,
            b's' => space,
            b'S' => PRINTABLE & !space,
            b if b.is_ascii_punctuation() => 1 << b,
            _ => return Err(unsupported("pattern escapes other than \\d \\w \\s and punctuation")),
        })
    }

    fn class(&mut self) -> Result<Class> {
        let negated = self.peek() == Some(b'^');
        self.at += negated as usize;
        let mut set: Class = 0;
        let mut first = true;
        loop {
            let b = self.next()?;
            if b == b']' && !first {
                break;
            }
            first = false;
            let lo = match b {
                b'\\' => {
                    let class = self.escape()?;
                    if class.count_ones() > 1 {
                        set |= class;
                        continue;
                    }
                    class.trailing_zeros() as u8
                }
                b if b.is_ascii() && !b.is_ascii_control() => b,
                _ => return Err(unsupported("pattern characters outside printable ASCII")),
            };
            if self.peek() == Some(b'-') && self.bytes.get(self.at + 1).is_some_and(|&c| c != b']')
            {
                self.at += 1;
                let hi = match self.next()? {
                    b'\\' => self.escape()?.trailing_zeros() as u8,
                    b => b,
                };
                if hi < lo || !hi.is_ascii() {
                    return Err(unsupported("pattern class range out of order"));
                }
                set |= (lo..=hi).fold(0, |s: Class, c| s | 1 << c);
            } else {
                set |= 1 << lo;
            }
        }
        Ok(if negated { PRINTABLE & !set } else { set & PRINTABLE })
    }

    fn quantified(&mut self, atom: Ast) -> Result<Ast> {
        let (min, max) = match self.peek() {
            Some(b'*') => (0, None),
            Some(b'+') => (1, None),
            Some(b'?') => (0, Some(1)),
            Some(b'{') => {
                self.at += 1;
                let min = self.number()?;
                let max = match self.next()? {
                    b'}' => return self.repeat(atom, min, Some(min)),
                    b',' if self.peek() == Some(b'}') => None,
                    b',' => Some(self.number()?),
                    _ => return Err(unsupported("pattern syntax (a malformed {n,m})")),
                };
                if self.next()? != b'}' {
                    return Err(unsupported("pattern syntax (a malformed {n,m})"));
                }
                return self.repeat(atom, min, max);
            }
            _ => return Ok(atom),
        };
        self.at += 1;
        self.repeat(atom, min, max)
    }

    fn repeat(&mut self, atom: Ast, min: u32, max: Option<u32>) -> Result<Ast> {
        if matches!(self.peek(), Some(b'?' | b'+')) {
            return Err(unsupported("pattern lazy or possessive quantifiers"));
        }
        if min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT || m < min) {
            return Err(unsupported("pattern repetition bounds over 32 or out of order"));
        }
        Ok(Ast::Repeat(Box::new(atom), min, max))
    }

    fn number(&mut self) -> Result<u32> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        core::str::from_utf8(&self.bytes[start..self.at])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or(unsupported("pattern syntax (a malformed {n,m})"))
    }
}

/// Glushkov's construction: one position per atom, no epsilon moves.
struct Glushkov {
    classes: Vec<Class>,
    follow: Vec<Positions>,
}

/// What a sub-expression contributes: its first and last positions and whether it can be empty.
struct Part {
    first: Positions,
    last: Positions,
    nullable: bool,
}

impl Glushkov {
    fn build(ast: &Ast) -> Result<Pattern> {
        let mut g = Glushkov { classes: vec![0], follow: vec![0] };
        let part = g.part(ast)?;
        g.follow[0] = part.first;
        let last = part.last | part.nullable as Positions;
        let on = (0..128u8)
            .map(|b| {
                let held = |class: &Class| PRINTABLE & class & (1 << b) != 0;
                g.classes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| held(c))
                    .fold(0, |s, (p, _)| s | 1 << p)
            })
            .collect();
        Ok(Pattern { follow: g.follow, on, last })
    }

    fn part(&mut self, ast: &Ast) -> Result<Part> {
        Ok(match ast {
            Ast::Empty => Part { first: 0, last: 0, nullable: true },
            Ast::Atom(class) => {
                if self.classes.len() > MAX_POSITIONS {
                    return Err(unsupported("patterns longer than 127 characters and classes"));
                }
                let p = self.classes.len();
                self.classes.push(*class);
                self.follow.push(0);
                Part { first: 1 << p, last: 1 << p, nullable: false }
            }
            Ast::Concat(items) => {
                let mut acc = Part { first: 0, last: 0, nullable: true };
                for item in items {
                    let next = self.part(item)?;
                    self.link(acc.last, next.first);
                    acc = Part {
                        first: acc.first | if acc.nullable { next.first } else { 0 },
                        last: next.last | if next.nullable { acc.last } else { 0 },
                        nullable: acc.nullable && next.nullable,
                    };
                }
                acc
            }
            Ast::Alt(options) => {
                let mut acc = Part { first: 0, last: 0, nullable: false };
                for option in options {
                    let next = self.part(option)?;
                    acc = Part {
                        first: acc.first | next.first,
                        last: acc.last | next.last,
                        nullable: acc.nullable || next.nullable,
                    };
                }
                acc
            }
            Ast::Repeat(inner, min, max) => {
                // Written out: `min` copies, then (max - min) optional ones or a starred one.
                let mut items: Vec<Ast> = (0..*min).map(|_| (**inner).clone()).collect();
                match max {
                    None => items.push(Ast::Star(inner.clone())),
                    Some(max) => items.extend(
                        (*min..*max).map(|_| Ast::Alt(vec![(**inner).clone(), Ast::Empty])),
                    ),
                }
                self.part(&Ast::Concat(items))?
            }
            Ast::Star(inner) => {
                let part = self.part(inner)?;
                self.link(part.last, part.first);
                Part { nullable: true, ..part }
            }
        })
    }

    fn link(&mut self, from: Positions, to: Positions) {
        for p in bits(from) {
            self.follow[p] |= to;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_match(p: &Pattern, text: &str) -> bool {
        p.matches(text.bytes().fold(Pattern::START, |s, b| p.reach(s) & p.on(b)))
    }

    #[test]
    fn anchored_patterns_match_what_they_say_and_nothing_else() {
        let p = Pattern::compile(r"^\d{4}-\d{2}-\d{2}$").unwrap();
        assert!(full_match(&p, "2027-05-03"));
        for text in ["2027-5-03", "2027-05-031", "x2027-05-03", ""] {
            assert!(!full_match(&p, text), "{text}");
        }
        let p = Pattern::compile("^(red|gr[e]+n)?[A-Z_]+$").unwrap();
        assert!(full_match(&p, "greeeenOK") && full_match(&p, "A_B") && full_match(&p, "redX"));
        assert!(!full_match(&p, "red") && !full_match(&p, "blueX"));
    }

    #[test]
    fn unanchored_ends_match_anything_there() {
        let p = Pattern::compile("ab+c").unwrap();
        assert!(full_match(&p, "xxabbbc yy") && full_match(&p, "abc"));
        assert!(!full_match(&p, "ac") && !full_match(&p, "abd"));
    }

    #[test]
    fn what_the_matcher_cannot_hold_is_a_typed_error() {
        for source in [r"(?=a)b", r"(a)\1", "é+", "a{40}", "a*?", "a^b", "(ab", "[z-a]"] {
            assert!(matches!(Pattern::compile(source), Err(Error::Unsupported { .. })), "{source}");
        }
        assert!(Pattern::compile(&"a".repeat(130)).is_err());
    }
}
