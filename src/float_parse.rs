//! A JSON number's text as the nearest f64 (ties to even), what core's `str::parse::<f64>`
//! gives, without core's parser: its table of 128-bit powers of five is 10 KB of the wasm module
//! that brotli cannot shrink. A close first guess is corrected an ulp at a time by comparing the
//! text with the exact decimal expansion (`float_digits::exact`) of the midpoint to each
//! neighbour. Only the JSON reader, numeric options and schema bounds parse floats, a few per
//! request.
use alloc::vec::Vec;
use core::cmp::Ordering;

use crate::float_digits::{binary, exact};

/// `-?digits(.digits)?([eE][+-]?digits)?` as the nearest f64; too large gives infinity. `None`
/// for any other text.
pub fn parse(text: &str) -> Option<f64> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, exponent(e)?),
        None => (unsigned, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, "0"));
    if !digits_only(int) || !digits_only(frac) {
        return None;
    }
    let all = || int.bytes().chain(frac.bytes());
    let zeros = all().take_while(|&b| b == b'0').count();
    let digits: Vec<u8> = all().skip(zeros).collect();
    let x = if digits.is_empty() {
        0.0
    } else {
        // The exponent of the first significant digit; exponents past any double's are clamped.
        nearest(&digits, (int.len() as i64 - 1 - zeros as i64 + exponent).clamp(-400, 400) as i32)
    };
    Some(if negative { -x } else { x })
}

/// `[+-]?digits` as an exponent, saturated far past any double's range.
fn exponent(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if !digits_only(digits) {
        return None;
    }
    let magnitude = digits.bytes().fold(0i64, |n, d| (n * 10 + i64::from(d - b'0')).min(1 << 32));
    Some(if text.starts_with('-') { -magnitude } else { magnitude })
}

fn digits_only(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The double nearest `d.ddd × 10^exp` for ASCII `digits` whose first is not `0`.
pub(crate) fn nearest(digits: &[u8], exp: i32) -> f64 {
    let digits = &digits[..digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1)];
    if digits.is_empty() || exp < -330 {
        return 0.0;
    }
    if exp > 310 {
        return f64::INFINITY;
    }
    let value = (digits, exp);
    let mut x = guess(digits, exp).min(f64::MAX);
    // The guess is within a few ulps; a tie goes to the even significand (the even bit pattern).
    while x.is_finite() {
        let odd = x.to_bits() & 1 == 1;
        let past = |side: Ordering, beyond| side == beyond || (side == Ordering::Equal && odd);
        if past(compare(value, midpoint_above(x)), Ordering::Greater) {
            x = step(x, 1);
        } else if x > 0.0 && past(compare(value, midpoint_above(step(x, -1))), Ordering::Less) {
            x = step(x, -1);
        } else {
            break;
        }
    }
    x
}

/// The first 19 digits times a power of ten: within a few ulps of the value.
fn guess(digits: &[u8], exp: i32) -> f64 {
    let head = &digits[..digits.len().min(19)];
    let m = head.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64;
    let power = exp - (head.len() as i32 - 1);
    // Dividing by 10^-power rounds once where multiplying by its reciprocal rounds twice;
    // 10^power alone underflows below 1e-308 before the digits can lift it back.
    let scaled = |m: f64, p: i32| {
        if p < 0 {
            m / ten_to(p.unsigned_abs())
        } else {
            m * ten_to(p.unsigned_abs())
        }
    };
    if power < -300 {
        scaled(m, power + 300) * 1e-300
    } else {
        scaled(m, power)
    }
}

/// 10^n by squaring: a handful of roundings, a few ulps (libm's `pow` is 1.2 KB of wasm).
fn ten_to(mut n: u32) -> f64 {
    let (mut result, mut base) = (1.0, 10.0f64);
    while n > 0 {
        if n & 1 == 1 {
            result *= base;
        }
        base *= base;
        n >>= 1;
    }
    result
}

/// The positive double `by` bit patterns above (`1`) or below (`-1`) `x`; past `f64::MAX` is
/// infinity.
fn step(x: f64, by: i64) -> f64 {
    f64::from_bits((x.to_bits() as i64 + by) as u64)
}

/// The exact decimal digits (first not `0`, trailing zeros dropped) and first digit's exponent
/// of the point halfway between `x` and the next double up, `(2m + 1) × 2^(e - 1)`.
fn midpoint_above(x: f64) -> (Vec<u8>, i32) {
    let (m, e) = binary(x);
    let (mut digits, exp) = exact(2 * m + 1, e - 1);
    digits.truncate(digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1));
    (digits, exp)
}

/// Orders two positive decimals given as digits without trailing zeros and the first digit's
/// exponent.
fn compare(a: (&[u8], i32), b: (Vec<u8>, i32)) -> Ordering {
    a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0[..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    fn agrees(text: &str) {
        let ours = parse(text).map(f64::to_bits);
        let core = text.parse::<f64>().ok().map(f64::to_bits);
        assert_eq!(ours, core, "{text}");
    }

    #[test]
    fn edge_values_parse_as_core_parses_them() {
        for text in [
            "0", "-0", "0.0", "-0.0", "0e999999999999", "1", "-1", "0.1", "0.3", "1e23", "9.5",
            "123.456", "4.35", "1e-400", "1e400", "-1e400", "1e308", "1.7976931348623157e308",
            // Halfway between f64::MAX and 2^1024 (rounds to infinity), and just below it.
            "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792",
            "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791",
            "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "2.47e-324",
            "4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
            "2.225073858507201136057409796709131975934819546351645648e-308",
            "9007199254740993", "9007199254740995", "9007199254740993.0000000000000000001",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "1.00000000000000011102230246251565404236316680908203126",
            "7.2057594037927933e16", "00000000000000000000000001.5", "1E5", "1e+5", "1e-5",
            "0.000000000000000000000000000000000000000000001e45",
        ] {
            agrees(text);
        }
    }

    #[test]
    fn text_other_than_a_number_is_none() {
        for text in ["", "-", ".5", "1.", "1e", "1e+", "+1", "1x", "--1", "1.2.3", "e5", "inf"] {
            assert_eq!(parse(text), None, "{text}");
        }
    }

    #[test]
    fn random_doubles_and_decimals_parse_as_core_parses_them() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..20_000 {
            let r = next();
            let x = f64::from_bits(r >> 1);
            if x.is_finite() {
                // Round-trip text, 17 digits, and halfway points written out at 25 digits.
                agrees(&format!("{x:e}"));
                agrees(&format!("{x:.16e}"));
                agrees(&format!("{:.24e}", x));
            }
            let digits = 1 + next() % 30;
            let mut text: String =
                (0..digits).map(|_| char::from(b'0' + (next() % 10) as u8)).collect();
            text.insert(1 + (next() % digits) as usize / 2, '.');
            if text.ends_with('.') {
                text.push('5');
            }
            agrees(&format!("{text}e{}", (next() % 700) as i64 - 350));
        }
    }
}
