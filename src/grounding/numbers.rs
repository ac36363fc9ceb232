//! Numbers written in a text, and numeric equality between them and argument values.
//!
//! A number is what upstream's `_NUMBER_TOKEN` reads: an optional sign, then either 1-3 digits
//! with `,ddd` thousands groups or a plain digit run, an optional `.digits` fraction, not
//! preceded by a word character, `.` or `,` and not followed by a digit. Values compare as
//! decimals (`21` = `21.0`, `1,500` = `1500`), as upstream's `Decimal` sets do. Digits are ASCII.
use alloc::string::String;
use alloc::vec::Vec;

/// A decimal number in lowest terms: `digits × 10^exp`, no leading or trailing zero digits
/// (zero is the empty digit string, unsigned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    negative: bool,
    digits: String,
    exp: i64,
}

impl Decimal {
    /// Parses `[-+]digits[.digits][e[-+]digits]`, ignoring `,` separators.
    pub(crate) fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut digits = String::new();
        for c in int.chars().chain(frac.chars()).filter(|&c| c != ',') {
            if !c.is_ascii_digit() {
                return None;
            }
            digits.push(c);
        }
        if digits.is_empty() {
            return None;
        }
        let mut exp = exp - frac.len() as i64;
        let trailing = digits.len() - digits.trim_end_matches('0').len();
        digits.truncate(digits.len() - trailing);
        exp += trailing as i64;
        let digits = String::from(digits.trim_start_matches('0'));
        if digits.is_empty() {
            return Some(Decimal { negative: false, digits, exp: 0 });
        }
        Some(Decimal { negative, digits, exp })
    }
}

/// The numbers written in `text`, by upstream's `_NUMBER_TOKEN` rule.
pub(crate) fn numbers(text: &str) -> Vec<Decimal> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let free = i == 0 || !is_word_or(chars[i - 1].1, &['.', ',']);
        match free.then(|| number_at(&chars, i)).flatten() {
            Some(end) => {
                let start = chars[i].0;
                let stop = chars.get(end).map_or(text.len(), |c| c.0);
                out.extend(Decimal::parse(&text[start..stop]));
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

fn is_word_or(c: char, extra: &[char]) -> bool {
    c.is_alphanumeric() || c == '_' || extra.contains(&c)
}

/// The end of the number starting at `i`, if one does (grouped form first, as the pattern's
/// alternation tries it).
fn number_at(chars: &[(usize, char)], i: usize) -> Option<usize> {
    let digit = |j: usize| chars.get(j).is_some_and(|c| c.1.is_ascii_digit());
    let run = |j: usize| (j..chars.len()).take_while(|&k| digit(k)).count();
    let start = if chars[i].1 == '-' || chars[i].1 == '+' { i + 1 } else { i };
    let lead = run(start);
    if lead == 0 {
        return None;
    }
    // A fraction, when `.digits` follows; then no digit may follow.
    let finish = |end: usize| -> Option<usize> {
        let end = if chars.get(end).is_some_and(|c| c.1 == '.') && digit(end + 1) {
            end + 1 + run(end + 1)
        } else {
            end
        };
        (!digit(end)).then_some(end)
    };
    if lead <= 3 {
        let mut end = start + lead;
        let mut groups = 0;
        while chars.get(end).is_some_and(|c| c.1 == ',')
            && run(end + 1) >= 3
            && (1..=3).all(|k| digit(end + k))
        {
            // A group is exactly three digits; a longer run is not a group end.
            if digit(end + 4) && run(end + 1) > 3 {
                break;
            }
            end += 4;
            groups += 1;
        }
        if groups > 0 {
            if let Some(end) = finish(end) {
                return Some(end);
            }
        }
    }
    finish(start + lead)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn decimals_compare_by_value() {
        assert_eq!(d("21"), d("21.0"));
        assert_eq!(d("1,500"), d("1500"));
        assert_eq!(d("0.50"), d("5e-1"));
        assert_eq!(d("-0"), d("0.0"));
        assert_eq!(d("+7"), d("7"));
        assert_ne!(d("-7"), d("7"));
        assert_ne!(d("210"), d("21"));
        assert_eq!(Decimal::parse("1.2.3"), None);
    }

    #[test]
    fn numbers_follow_upstreams_token_rule() {
        let got = |t: &str| numbers(t);
        assert_eq!(
            got("set it to 21 degrees, then 1,500 steps and -3.5"),
            [d("21"), d("1500"), d("-3.5")]
        );
        // Inside words, after a decimal point or a comma, or a run followed by a digit: no.
        assert!(got("room2 v1.2.3 x-").is_empty());
        assert_eq!(got("x-5 (-5)"), [d("5"), d("-5")]);
        assert_eq!(got("1,2345"), [d("1")]);
        assert_eq!(got("12,345,678.5 ok"), [d("12345678.5")]);
        assert_eq!(got("12345,678"), [d("12345")]);
        assert_eq!(got("at 7."), [d("7")]);
    }
}
