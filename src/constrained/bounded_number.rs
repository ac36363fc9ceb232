//! A number held within `minimum`/`maximum` (exclusive or not) while it is written: a digit
//! is allowed only when some completion of the digits so far still lands in the bounds, and
//! the number ends only inside them. Plain decimal only (no exponent), at most 15 digits, so
//! every value is exact in an `f64`, as a JS or Python reader will see it.
use super::json_value::Step;

/// Digits a bounded number may have (exact in an f64).
const MAX_DIGITS: u8 = 15;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub lo: f64,
    pub lo_exclusive: bool,
    pub hi: f64,
    pub hi_exclusive: bool,
    pub integer: bool,
}

impl Bounds {
    /// Whether `x` lies inside.
    pub fn holds(&self, x: f64) -> bool {
        let above = if self.lo_exclusive { x > self.lo } else { x >= self.lo };
        let below = if self.hi_exclusive { x < self.hi } else { x <= self.hi };
        above && below
    }

    /// Whether some value of `[a, b]` lies inside (`b` itself may be a limit, not a value).
    fn meets(&self, a: f64, b: f64) -> bool {
        if a == b {
            return self.holds(a);
        }
        let below = if self.hi_exclusive { a < self.hi } else { a <= self.hi };
        let above = if self.lo_exclusive { b > self.lo } else { b >= self.lo };
        below && above
    }

    /// Whether any value at all lies inside (an integer one when `integer`).
    pub fn satisfiable(&self) -> bool {
        if !self.integer {
            return self.lo < self.hi
                || (self.lo == self.hi && !self.lo_exclusive && !self.hi_exclusive);
        }
        // The least integer inside, among those of at most MAX_DIGITS digits.
        let mut lo = libm::ceil(self.lo).max(-(1e15 - 1.0));
        if self.lo_exclusive && lo == self.lo {
            lo += 1.0;
        }
        self.holds(lo) && lo < 1e15
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
            b'.' if self.digits > 0 && self.frac_digits.is_none() && !bounds.integer => {
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

    fn value(&self) -> f64 {
        let x = self.mantissa as f64 / libm::pow(10.0, self.frac_digits.unwrap_or(0) as f64);
        if self.negative {
            -x
        } else {
            x
        }
    }

    fn can_end(&self, bounds: &Bounds) -> bool {
        self.digits > 0 && self.frac_digits != Some(0) && bounds.holds(self.value())
    }

    /// Whether some completion of these digits (within the digit limit) is in bounds.
    fn can_reach(&self, bounds: &Bounds) -> bool {
        let spare = MAX_DIGITS - self.digits;
        let signed = |a: f64, b: f64| {
            if self.negative {
                bounds.meets(-b, -a)
            } else {
                bounds.meets(a, b)
            }
        };
        let fraction = |whole: f64| {
            if bounds.integer || spare == 0 {
                whole
            } else {
                whole + 1.0
            }
        };
        if self.digits == 0 {
            let most = libm::pow(10.0, spare as f64);
            return signed(0.0, most);
        }
        if let Some(n) = self.frac_digits {
            let x = self.value().abs();
            let step = if spare == 0 { 0.0 } else { libm::pow(10.0, -(n as f64)) };
            return signed(x, x + step);
        }
        if self.leading_zero() {
            return signed(0.0, fraction(0.0));
        }
        // `m` followed by k more integer digits, and perhaps a fraction.
        let m = self.mantissa as f64;
        (0..=spare).any(|k| {
            let scale = libm::pow(10.0, k as f64);
            signed(m * scale, fraction(m * scale + scale - 1.0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(lo: f64, hi: f64, integer: bool) -> Bounds {
        Bounds { lo, lo_exclusive: false, hi, hi_exclusive: false, integer }
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
        let open =
            Bounds { lo: 0.0, lo_exclusive: true, hi: 1.0, hi_exclusive: true, integer: false };
        assert_eq!(run("0", &open), (1, false));
        assert_eq!(run("1", &open).0, 0);
        assert_eq!(run("0.5", &open), (3, true));
    }

    #[test]
    fn satisfiable_bounds() {
        assert!(bounds(1.0, 1.0, true).satisfiable());
        assert!(!bounds(1.2, 1.8, true).satisfiable());
        assert!(bounds(1.2, 1.8, false).satisfiable());
        assert!(!Bounds {
            lo: 1.0,
            lo_exclusive: true,
            hi: 1.0,
            hi_exclusive: false,
            integer: false
        }
        .satisfiable());
    }
}
