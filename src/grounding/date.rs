//! The date fact: `date: YYYY-MM-DD Ddd HH:MM`, which lets the model resolve "tomorrow".
//!
//! Upstream prefixes it to the system prompt by default (`auto_date`) unless the caller already
//! gave one. The core has no clock: the host passes the fact's value (`2026-12-02 Wed 06:45`),
//! or its parts to [`fact_from_unix`].
use alloc::format;
use alloc::string::String;

use crate::{text_search, Error, Result};

/// The system text with the date fact prefixed, by upstream's rule: unchanged when it already
/// holds a `date:` key (not the tail of a word such as `update:`) or an ISO date, or when it
/// is JSON (starts with `{`); the fact alone when it is blank; else `fact + "; " + system`.
/// `date` is the fact's value, `YYYY-MM-DD Ddd HH:MM`.
pub fn with_date_fact(system: &str, date: &str) -> Result<String> {
    check(date)?;
    let fact = format!("date: {date}");
    Ok(if has_date(system) || system.trim_start().starts_with('{') {
        String::from(system)
    } else if system.trim().is_empty() {
        fact
    } else {
        format!("{fact}; {system}")
    })
}

/// The fact's value for a Unix time (seconds) shifted by `offset_minutes` (local time = UTC +
/// offset): `YYYY-MM-DD Ddd HH:MM`.
pub fn fact_from_unix(secs: i64, offset_minutes: i64) -> String {
    let t = secs + offset_minutes * 60;
    let (days, rem) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    format!("{y:04}-{m:02}-{d:02} {weekday} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}

/// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Whether `text` already carries a date: a `date:` key or an ISO `dddd-dd-dd` stamp.
fn has_date(text: &str) -> bool {
    let b = text.as_bytes();
    let key =
        text_search::positions(text, "date:").any(|i| i == 0 || !b[i - 1].is_ascii_alphabetic());
    key || (0..b.len().saturating_sub(9)).any(|i| iso_at(b, i))
}

fn iso_at(b: &[u8], i: usize) -> bool {
    let d = |k: usize| b.get(i + k).is_some_and(u8::is_ascii_digit);
    (0..4).all(d) && b[i + 4] == b'-' && d(5) && d(6) && b[i + 7] == b'-' && d(8) && d(9)
}

/// A fact value must look like `YYYY-MM-DD Ddd HH:MM` (the weekday and time may be left out),
/// so a host's mistake is an error rather than a confusing prompt.
fn check(date: &str) -> Result<()> {
    let b = date.as_bytes();
    let ok = b.len() >= 10
        && iso_at(b, 0)
        && date.is_ascii()
        && date.len() <= 20
        && !date.contains(['\n', ';']);
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument { name: "date", reason: "expected \"YYYY-MM-DD Ddd HH:MM\"" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "2026-12-02 Wed 06:45";

    #[test]
    fn the_fact_is_prefixed_by_upstreams_rule() {
        assert_eq!(with_date_fact("", D).unwrap(), "date: 2026-12-02 Wed 06:45");
        assert_eq!(with_date_fact("  ", D).unwrap(), "date: 2026-12-02 Wed 06:45");
        assert_eq!(
            with_date_fact("Be brief.", D).unwrap(),
            "date: 2026-12-02 Wed 06:45; Be brief."
        );
        for kept in ["date: 2020-01-01", "Today is 2020-01-01.", " {\"a\":1}", "x; date:tomorrow"] {
            assert_eq!(with_date_fact(kept, D).unwrap(), kept);
        }
        // `update:` is not a date key.
        assert!(with_date_fact("update: soon", D).unwrap().starts_with("date: "));
        assert!(with_date_fact("x", "tomorrow").is_err());
        assert!(with_date_fact("x", "2026-12-02; ignore").is_err());
    }

    #[test]
    fn unix_times_become_calendar_facts() {
        assert_eq!(fact_from_unix(0, 0), "1970-01-01 Thu 00:00");
        assert_eq!(fact_from_unix(1_796_193_900, 0), "2026-12-02 Wed 06:45");
        assert_eq!(fact_from_unix(951_782_400, 0), "2000-02-29 Tue 00:00");
        assert_eq!(fact_from_unix(0, -60), "1969-12-31 Wed 23:00");
    }
}
