//! The digits CPython's `repr` writes for a float: the shortest decimal that reads back as the
//! same f64, and of those the nearest to it (ties to the even digit).
//!
//! Worked out from the double's exact decimal expansion, rounded to 1, 2, ... 17 significant
//! digits until one reads back, checked with the JSON reader's float parser (`float_parse`).
//! core's `{:e}` (Grisu with a Dragon fallback and their tables) was 14 KB of the wasm module;
//! this is a small bignum. Only the JSON writer and grounding format floats, a few per request.
use alloc::string::String;
use alloc::vec::Vec;

/// `(digits, exponent)` of a positive finite `x`: `x` reads back from `d.ddd` × 10^exponent,
/// `digits` without trailing zeros.
pub fn shortest(x: f64) -> (String, i32) {
    let (digits, exp) = shortest_ascii(x);
    (digits.into_iter().map(char::from).collect(), exp)
}

fn shortest_ascii(x: f64) -> (Vec<u8>, i32) {
    let (exact, exp) = exact_digits(x);
    for len in 1..exact.len() {
        let (nearest, other) = rounded(&exact, exp, len);
        for (digits, exp) in [nearest, other] {
            if reads_back(&digits, exp, x) {
                return (digits, exp);
            }
        }
    }
    // At most 17 digits always read back; an expansion as short is the exact value itself.
    let mut digits = exact;
    trim_zeros(&mut digits);
    (digits, exp)
}

/// The exact decimal expansion of a positive finite `x` as ASCII digits and the exponent of the
/// first.
fn exact_digits(x: f64) -> (Vec<u8>, i32) {
    let (m, e) = binary(x);
    exact(m, e)
}

/// `(m, e)` with `x = m × 2^e` for a non-negative finite `x`: the significand with its implicit
/// bit, and the exponent of its last bit.
pub(crate) fn binary(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let (biased, fraction) = ((bits >> 52) as i32 & 0x7ff, bits & ((1 << 52) - 1));
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, biased - 1075)
    }
}

/// The exact decimal expansion of `m × 2^e` (`m > 0`) as ASCII digits and the exponent of the
/// first: the integer `m × 2^e` for `e >= 0`, else `m × 5^-e` scaled by 10^e.
pub(crate) fn exact(m: u64, e: i32) -> (Vec<u8>, i32) {
    let mut n = Big(alloc::vec![m as u32, (m >> 32) as u32]);
    let (base, mut power) = if e >= 0 { (2, e) } else { (5, -e) };
    // The largest powers of 2 and of 5 that fit a u32 multiplier.
    let (step, step_power) = if base == 2 { (1 << 31, 31) } else { (1_220_703_125, 13) };
    while power >= step_power {
        n.mul(step);
        power -= step_power;
    }
    n.mul((base as u32).pow(power as u32));
    let digits = n.into_decimal();
    let scale = if e >= 0 { 0 } else { e };
    let exp = digits.len() as i32 - 1 + scale;
    (digits, exp)
}

/// `exact` rounded to `len < exact.len()` significant digits both ways, the nearest first (ties
/// to even), each as `(digits, exponent)` without trailing zeros.
fn rounded(exact: &[u8], exp: i32, len: usize) -> ((Vec<u8>, i32), (Vec<u8>, i32)) {
    let (head, rest) = exact.split_at(len);
    let mut down = head.to_vec();
    let mut up = head.to_vec();
    let mut up_exp = exp;
    // Decimal increment; 99..9 carries into a new leading 1.
    match up.iter().rposition(|&d| d != b'9') {
        Some(i) => {
            up[i] += 1;
            up.truncate(i + 1);
        }
        None => {
            up = alloc::vec![b'1'];
            up_exp += 1;
        }
    }
    let above_half = match rest[0].cmp(&b'5') {
        core::cmp::Ordering::Greater => true,
        core::cmp::Ordering::Less => false,
        core::cmp::Ordering::Equal if rest[1..].iter().any(|&d| d != b'0') => true,
        core::cmp::Ordering::Equal => (head[len - 1] - b'0') % 2 == 1,
    };
    trim_zeros(&mut down);
    let (down, up) = ((down, exp), (up, up_exp));
    if above_half {
        (up, down)
    } else {
        (down, up)
    }
}

fn reads_back(digits: &[u8], exp: i32, x: f64) -> bool {
    crate::float_parse::nearest(digits, exp) == x
}

fn trim_zeros(digits: &mut Vec<u8>) {
    let end = digits.iter().rposition(|&d| d != b'0').map_or(1, |i| i + 1);
    digits.truncate(end);
}

/// An unsigned integer as 32-bit limbs, least significant first.
struct Big(Vec<u32>);

impl Big {
    fn mul(&mut self, k: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let v = *limb as u64 * k as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divides by 10^9 in place, returning the remainder.
    fn div_billion(&mut self) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = rem << 32 | *limb as u64;
            *limb = (v / 1_000_000_000) as u32;
            rem = v % 1_000_000_000;
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        rem as u32
    }

    /// Decimal digits, most significant first, no leading zeros (the value is non-zero).
    fn into_decimal(mut self) -> Vec<u8> {
        let mut chunks = Vec::new();
        while !self.0.is_empty() {
            chunks.push(self.div_billion());
        }
        let mut digits = Vec::with_capacity(chunks.len() * 9);
        for chunk in chunks.iter().rev() {
            let mut nine = [0u8; 9];
            let mut c = *chunk;
            for d in nine.iter_mut().rev() {
                *d = b'0' + (c % 10) as u8;
                c /= 10;
            }
            digits.extend_from_slice(&nine);
        }
        let first = digits.iter().position(|&d| d != b'0').unwrap_or(0);
        digits.drain(..first);
        digits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    /// What core's formatting gives, as this module's caller used it before: the shortest
    /// round-trip length from `{:e}`, the correctly rounded string of that length when it
    /// reads back.
    fn core_shortest(x: f64) -> (Vec<u8>, i32) {
        let parts = |s: &str| {
            let (m, e) = s.split_once('e').unwrap();
            let digits: Vec<u8> = m.bytes().filter(u8::is_ascii_digit).collect();
            (digits, e.parse::<i32>().unwrap())
        };
        let shortest = format!("{x:e}");
        let len = parts(&shortest).0.len();
        let nearest = format!("{:.*e}", len - 1, x);
        let (mut digits, exp) =
            if nearest.parse::<f64>() == Ok(x) { parts(&nearest) } else { parts(&shortest) };
        trim_zeros(&mut digits);
        (digits, exp)
    }

    #[test]
    fn agrees_with_core_formatting_on_edge_and_random_doubles() {
        let mut cases = alloc::vec![
            5e-324,
            1e-323,
            2.2250738585072014e-308,
            2.225073858507201e-308,
            1.7976931348623157e308,
            1e23,
            0.1,
            0.3,
            1.0,
            9.5,
            0.5,
            123.456,
            // Halfway between two 17-digit candidates.
            1962539299388703.0 + 0.25,
            9007199254740992.0,
            4.35,
            2f64.powi(-1022),
            2f64.powi(1000),
        ];
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let x = f64::from_bits(s >> 1);
            if x.is_finite() && x > 0.0 {
                cases.push(x);
            }
            // Short decimals, where the nearest and the shortest candidates often differ.
            cases.push((s % 1_000_000) as f64 / 10f64.powi((s >> 40) as i32 % 12) + 1e-9);
        }
        for x in cases {
            assert_eq!(shortest_ascii(x), core_shortest(x), "{x:e}");
        }
    }
}
