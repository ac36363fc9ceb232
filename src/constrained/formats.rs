//! The string `format`s structured output holds, each as the pattern of the values it writes:
//! a subset of what JSON Schema's format vocabulary (and ajv-formats' full mode) accepts, so
//! each value validates. Dates have real month lengths and leap years (RFC 3339 `full-date`),
//! times have seconds and an offset (`full-time`: hours 00-23, no leap second), `email` is
//! ajv-formats' grammar. A `pattern` beside a format is held too ([`super::dfa`]).
use super::pattern::Pattern;
use crate::{Error, Result};

macro_rules! date {
    () => {
        concat!(
            // 29 February of leap years: divisible by 4, and by 400 where by 100.
            r"(\d\d(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29",
            r"|\d{4}-((0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])|(0[13-9]|1[0-2])-(29|30)",
            r"|(0[13578]|1[02])-31)"
        )
    };
}
macro_rules! time {
    () => {
        r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)"
    };
}
macro_rules! octet {
    () => {
        r"(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    };
}
macro_rules! atext {
    () => {
        "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]"
    };
}
macro_rules! label {
    () => {
        "[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?"
    };
}

/// The pattern of a `format`'s values; a format it does not know is refused.
pub fn pattern(format: &str) -> Result<Pattern> {
    Pattern::compile(match format {
        "date" => concat!("^(", date!(), ")$"),
        "time" => concat!("^", time!(), "$"),
        "date-time" => concat!("^(", date!(), ")T", time!(), "$"),
        "email" => {
            concat!("^", atext!(), r"+(\.", atext!(), "+)*@(", label!(), r"\.)+", label!(), "$")
        }
        "uuid" => "^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$",
        "ipv4" => concat!(r"^(", octet!(), r"\.){3}", octet!(), "$"),
        _ => {
            return Err(Error::Unsupported {
                what: "a string format other than date, time, date-time, email, uuid, ipv4",
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constrained::dfa::StringDfa;
    use crate::constrained::schema::Length;

    fn valid(format: &str, text: &str) -> bool {
        takes(&StringDfa::new(&pattern(format).unwrap(), None).unwrap(), text)
    }

    fn takes(d: &StringDfa, text: &str) -> bool {
        let end = text.bytes().try_fold(StringDfa::START, |s, b| d.advance(s, b));
        end.is_some_and(|s| d.can_close(s, text.len() as u32, Length::ANY))
    }

    fn leap(y: u32) -> bool {
        y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400))
    }

    #[test]
    fn every_date_of_the_calendar_and_nothing_else() {
        // Every year of a 400-year cycle and around it, every month and day number 00-39.
        let d = StringDfa::new(&pattern("date").unwrap(), None).unwrap();
        for y in (0..430).chain(1890..1910).chain(9990..10000) {
            for m in 0..=13 {
                for day in 0..40 {
                    let days = match m {
                        2 if leap(y) => 29,
                        2 => 28,
                        4 | 6 | 9 | 11 => 30,
                        _ => 31,
                    };
                    let real = (1..=12).contains(&m) && day >= 1 && day <= days;
                    let text = alloc::format!("{y:04}-{m:02}-{day:02}");
                    assert_eq!(takes(&d, &text), real, "{text}");
                }
            }
        }
    }

    #[test]
    fn times_and_date_times_have_seconds_and_an_offset() {
        for text in ["00:00:00Z", "23:59:59.123456+14:00", "12:30:05-03:30"] {
            assert!(valid("time", text), "{text}");
            assert!(valid("date-time", &alloc::format!("2024-02-29T{text}")), "{text}");
        }
        for text in ["24:00:00Z", "11:33", "11:33:00", "10:60:00Z", "10:00:60Z", "10:00:00+24:00"] {
            assert!(!valid("time", text), "{text}");
        }
        for text in ["2023-02-29T00:00:00Z", "4444-01-15T01:15", "2024-01-01t00:00:00Z"] {
            assert!(!valid("date-time", text), "{text}");
        }
    }

    #[test]
    fn emails_uuids_and_addresses_by_their_grammars() {
        for text in ["a@b.c", "first.last+tag@mail-1.example.org", "x!#$%&'*/=?^_`{|}~-@a.b"] {
            assert!(valid("email", text), "{text}");
        }
        for text in ["a@b", "@b.c", "a..b@c.d", "a@-b.c", "a@b-.c", "a b@c.d"] {
            assert!(!valid("email", text), "{text}");
        }
        assert!(valid("uuid", "123e4567-E89b-12d3-a456-426614174000"));
        assert!(!valid("uuid", "123e4567-e89b-12d3-a456-42661417400"));
        assert!(valid("ipv4", "255.0.10.199") && !valid("ipv4", "256.1.1.1"));
        assert!(!valid("ipv4", "01.1.1.1"));
        assert!(pattern("hostname").is_err());
    }
}
