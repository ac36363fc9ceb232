//! A number held within `minimum`/`maximum` (exclusive or not), and for integers `multipleOf`,
//! while it is written: a byte is taken only when some completion of the digits so far lands
//! in the bounds (decided exactly, on the values a reader parses the decimals to), and the
//! number ends only inside them. Plain decimal only (no exponent), at most 15 digits, so every
//! value is exact in an `f64` (integers within 2^53 - 1) and in its range, as a JS or Python
//! reader will see it. Unbounded numbers are held to the same form.
use super::json_value::Step;

/// Digits a number may have (exact in an f64).
const MAX_DIGITS: u8 = 15;

const fn pow10(n: u8) -> u64 {
    let mut x = 1;
    let mut i = 0;
    while i < n {
        x *= 10;
        i += 1;
    }
    x
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub lo: f64,
    pub lo_exclusive: bool,
    pub hi: f64,
    pub hi_exclusive: bool,
    pub integer: bool,
    /// What an integer must be a multiple of (1: any).
    pub multiple: u64,
}

impl Bounds {
    fn above(&self, x: f64) -> bool {
        if self.lo_exclusive {
            x > self.lo
        } else {
            x >= self.lo
        }
    }

    fn below(&self, x: f64) -> bool {
        if self.hi_exclusive {
            x < self.hi
        } else {
            x <= self.hi
        }
    }

    /// Whether some `±g / 10^p`, `g` in `first..=last`, lies inside (a multiple, if asked).
    fn any(&self, negative: bool, first: u64, last: u64, p: u8) -> bool {
        if first > last {
            return false;
        }
        let scale = pow10(p) as f64;
        let x = |g: u64| if negative { -(g as f64 / scale) } else { g as f64 / scale };
        // One bound holds from some `g` on, the other up to some `g`: find the first `g` the
        // former holds for (its estimate is off by a step at most), then ask the latter.
        let from = |g| if negative { self.below(x(g)) } else { self.above(x(g)) };
        let edge = (if negative { -self.hi } else { self.lo }) * scale;
        let mut g = if edge <= first as f64 {
            first
        } else if edge >= last as f64 {
            last
        } else {
            libm::ceil(edge) as u64
        };
        while g > first && from(g - 1) {
            g -= 1;
        }
        while !from(g) {
            if g == last {
                return false;
            }
            g += 1;
        }
        if self.multiple > 1 {
            g = g.div_ceil(self.multiple).saturating_mul(self.multiple);
            if g > last {
                return false;
            }
        }
        if negative {
            self.above(x(g))
        } else {
            self.below(x(g))
        }
    }

    /// Whether any number of at most 15 digits (an integer one when `integer`) lies inside.
    pub fn satisfiable(&self) -> bool {
        let positive = BoundedNumber::default();
        positive.can_reach(self) || BoundedNumber { negative: true, ..positive }.can_reach(self)
    }
}

/// Digits so far: `mantissa / 10^frac_digits`, with its sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoundedNumber {
    negative: bool,
    digits: u8,
    mantissa: u64,
    /// `Some(n)`: a `.` and `n` digits after it.
    frac_digits: Option<u8>,
}

impl BoundedNumber {
    /// Takes byte `b`: [`Step::DoneReprocess`] when `b` ends a number that is in bounds.
    pub fn step(&mut self, b: u8, bounds: &Bounds) -> Step {
        let mut next = *self;
        match b {
            b'-' if self.digits == 0 && !self.negative => next.negative = true,
            b'0'..=b'9' if self.digits < MAX_DIGITS && !self.leading_zero() => {
                next.digits += 1;
                next.mantissa = self.mantissa * 10 + (b - b'0') as u64;
                next.frac_digits = self.frac_digits.map(|n| n + 1);
            }
            b'.' if self.digits > 0
                && self.digits < MAX_DIGITS
                && self.frac_digits.is_none()
                && !bounds.integer =>
            {
                next.frac_digits = Some(0)
            }
            _ => return if self.can_end(bounds) { Step::DoneReprocess } else { Step::Rejected },
        }
        if !next.can_reach(bounds) {
            return Step::Rejected;
        }
        *self = next;
        Step::Consumed
    }

    /// A lone `0` (or `-0`) before any `.`: JSON allows no digit after it.
    fn leading_zero(&self) -> bool {
        self.digits == 1 && self.mantissa == 0 && self.frac_digits.is_none()
    }

    fn can_end(&self, bounds: &Bounds) -> bool {
        let x = self.mantissa as f64 / pow10(self.frac_digits.unwrap_or(0)) as f64;
        self.digits > 0
            && self.frac_digits != Some(0)
            && bounds.above(if self.negative { -x } else { x })
            && bounds.below(if self.negative { -x } else { x })
            && self.mantissa.is_multiple_of(bounds.multiple.max(1))
    }

    /// Whether some completion of these digits (within the digit limit) is in bounds: the
    /// values it can reach, on the finest grid its spare digits allow, for each place the
    /// decimal point may still go.
    fn can_reach(&self, b: &Bounds) -> bool {
        let spare = MAX_DIGITS - self.digits;
        let neg = self.negative;
        // The mantissa followed by `k` more digits.
        let span = |k: u8| (self.mantissa * pow10(k), (self.mantissa + 1) * pow10(k) - 1);
        match self.frac_digits {
            Some(n) => {
                let (first, last) = span(spare);
                b.any(neg, first, last, n + spare)
            }
            None if self.digits == 0 => {
                let places = if b.integer { 0 } else { MAX_DIGITS - 1 };
                (0..=places).any(|p| b.any(neg, 0, pow10(MAX_DIGITS) - 1, p))
            }
            None if self.leading_zero() && (b.integer || spare == 0) => b.any(neg, 0, 0, 0),
            None if self.leading_zero() => b.any(neg, 0, pow10(spare) - 1, spare),
            None if b.integer => (0..=spare).any(|k| {
                let (first, last) = span(k);
                b.any(neg, first, last, 0)
            }),
            None => {
                let (first, last) = span(spare);
                (0..=spare).any(|k| b.any(neg, first, last, spare - k))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(lo: f64, hi: f64, integer: bool) -> Bounds {
        Bounds { lo, lo_exclusive: false, hi, hi_exclusive: false, integer, multiple: 1 }
    }

    /// Bytes of `text` accepted, and whether a following `,` ends the number.
    fn run(text: &str, b: &Bounds) -> (usize, bool) {
        let mut n = BoundedNumber::default();
        let accepted = text.bytes().take_while(|&c| n.step(c, b) == Step::Consumed).count();
        (accepted, accepted == text.len() && n.step(b',', b) == Step::DoneReprocess)
    }

    #[test]
    fn numbers_inside_the_bounds_are_written_and_end() {
        let age = bounds(0.0, 120.0, true);
        for text in ["0", "7", "120", "99"] {
            assert_eq!(run(text, &age), (text.len(), true), "{text}");
        }
        let score = bounds(-1.0, 1.0, false);
        for text in ["-1", "-0.25", "0.999", "1", "1.0", "-0"] {
            assert_eq!(run(text, &score), (text.len(), true), "{text}");
        }
    }

    #[test]
    fn digits_that_cannot_end_inside_are_refused_where_they_leave_them() {
        let age = bounds(0.0, 120.0, true);
        assert_eq!(run("-", &bounds(1.0, 120.0, true)).0, 0, "no negative (-0 is 0)");
        assert_eq!(run("-0", &age), (2, true));
        assert_eq!(run("121", &age).0, 2);
        assert_eq!(run("1000", &age).0, 3);
        assert_eq!(run("1.5", &age).0, 1, "an integer takes no fraction");
        let teen = bounds(13.0, 19.0, true);
        assert_eq!(run("2", &teen).0, 0);
        // "1" can still become 13..19, but cannot end as 1.
        assert_eq!(run("1", &teen), (1, false));
        let open = Bounds { lo_exclusive: true, hi_exclusive: true, ..bounds(0.0, 1.0, false) };
        assert_eq!(run("0", &open), (1, false));
        assert_eq!(run("1", &open).0, 0);
        assert_eq!(run("0.5", &open), (3, true));
    }

    #[test]
    fn satisfiable_bounds() {
        assert!(bounds(1.0, 1.0, true).satisfiable());
        assert!(!bounds(1.2, 1.8, true).satisfiable());
        assert!(bounds(1.2, 1.8, false).satisfiable());
        assert!(!Bounds { lo_exclusive: true, ..bounds(1.0, 1.0, false) }.satisfiable());
    }

    #[test]
    fn bounds_no_15_digit_decimal_meets_are_unsatisfiable() {
        assert!(!bounds(1e308, 1.7e308, false).satisfiable(), "309-digit numbers");
        let tight = Bounds {
            lo_exclusive: true,
            hi_exclusive: true,
            ..bounds(0.1, 0.1000000000000001, false)
        };
        assert!(!tight.satisfiable());
        assert!(bounds(0.1, 0.100000000000001, false).satisfiable());
        assert!(bounds(1e14, 1e14, true).satisfiable() && !bounds(1e15, 2e15, true).satisfiable());
    }

    #[test]
    fn unbounded_numbers_stay_plain_15_digit_decimals() {
        let any = bounds(f64::NEG_INFINITY, f64::INFINITY, false);
        assert_eq!(run("123456789012345", &any), (15, true));
        assert_eq!(run("1234567890123456", &any).0, 15);
        assert_eq!(run("0.00000000000001", &any), (16, true));
        assert_eq!(run("1e5", &any).0, 1);
        let int = bounds(f64::NEG_INFINITY, f64::INFINITY, true);
        assert_eq!(run("-999999999999999", &int), (16, true));
    }

    #[test]
    fn a_multiple_is_reached_or_refused_where_none_is_left() {
        let five = Bounds { multiple: 5, ..bounds(0.0, 100.0, true) };
        assert_eq!(run("35", &five), (2, true));
        assert_eq!(run("33", &five), (1, false), "no multiple of 5 starts with 33 within 100");
        assert_eq!(run("101", &five).0, 2, "no multiple of 5 starts with 10 within 100 but 100");
        assert_eq!(run("100", &five), (3, true));
        assert!(!Bounds { multiple: 7, ..bounds(1.0, 6.0, true) }.satisfiable());
    }

    #[test]
    fn every_prefix_taken_can_still_end_in_bounds() {
        // Exhaustive over short texts: a prefix the stepper takes always has a byte that
        // continues it or ends it.
        let cases = [
            bounds(-1.5, 2.25, false),
            Bounds { lo_exclusive: true, hi_exclusive: true, ..bounds(0.1, 0.2, false) },
            Bounds { multiple: 3, ..bounds(-20.0, 20.0, true) },
            bounds(0.001, 0.001, false),
        ];
        for b in cases {
            let mut frontier = alloc::vec![BoundedNumber::default()];
            for _ in 0..5 {
                let mut next: alloc::vec::Vec<BoundedNumber> = alloc::vec::Vec::new();
                for n in &frontier {
                    let mut live = n.can_end(&b);
                    for c in b"-0123456789." {
                        let mut m = *n;
                        if m.step(*c, &b) == Step::Consumed {
                            live = true;
                            if !next.contains(&m) {
                                next.push(m);
                            }
                        }
                    }
                    assert!(live, "{n:?} stranded in {b:?}");
                }
                frontier = next;
            }
        }
    }
}
