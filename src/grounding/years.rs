//! Years a text writes, and whether it reasons relatively ("tomorrow", "next week"): upstream's
//! `_source_years` and `_relative_cue`, read by hand over the lowercased text.
//!
//! A year is the number after a day and a month ("5 june 2024", "june 5th, 2024") unless it
//! is the hour of a time ("june 5 19:30", "june 5 7 pm"), the 3-4 digits after a month
//! ("june 2024"), the number after "year", or the first part of a year-first numeric date
//! ("2024-03-15", "2024/3/15"). Digits are ASCII.
use alloc::collections::BTreeSet;
use alloc::vec::Vec;

const MONTHS: [(&str, &str); 12] = [
    ("jan", "uary"),
    ("feb", "ruary"),
    ("mar", "ch"),
    ("apr", "il"),
    ("may", ""),
    ("jun", "e"),
    ("jul", "y"),
    ("aug", "ust"),
    ("sep", "tember"),
    ("oct", "ober"),
    ("nov", "ember"),
    ("dec", "ember"),
];

const DAY_SUFFIXES: [&str; 4] = ["st", "nd", "rd", "th"];

const RELATIVE: [&str; 15] = [
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "next",
    "this",
    "coming",
    "now",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

const UNITS: [&str; 4] = ["day", "week", "month", "year"];

struct Text {
    c: Vec<char>,
}

impl Text {
    fn new(text: &str) -> Self {
        Text { c: super::lower::lower(text).chars().collect() }
    }

    fn at(&self, i: usize) -> Option<char> {
        self.c.get(i).copied()
    }

    fn is(&self, i: usize, f: impl Fn(char) -> bool) -> bool {
        self.at(i).is_some_and(f)
    }

    fn digit(&self, i: usize) -> bool {
        self.is(i, |c| c.is_ascii_digit())
    }

    fn word(&self, i: usize) -> bool {
        self.is(i, |c| c.is_alphanumeric() || c == '_')
    }

    /// A word starts at `i` (`\b` before a word character).
    fn word_start(&self, i: usize) -> bool {
        self.word(i) && (i == 0 || !self.word(i - 1))
    }

    fn run(&self, i: usize, f: impl Fn(char) -> bool) -> usize {
        self.c[i.min(self.c.len())..].iter().take_while(|&&c| f(c)).count()
    }

    fn digits(&self, i: usize) -> usize {
        self.run(i, |c| c.is_ascii_digit())
    }

    fn spaces(&self, i: usize) -> usize {
        self.run(i, char::is_whitespace)
    }

    fn lit(&self, i: usize, s: &str) -> bool {
        s.chars().enumerate().all(|(k, ch)| self.at(i + k) == Some(ch))
    }

    /// Where a month name (and an optional `.`) starting at `i` may end, most greedy first.
    fn month_ends(&self, i: usize) -> Vec<usize> {
        let mut ends = Vec::new();
        for (stem, rest) in MONTHS {
            if !self.lit(i, stem) {
                continue;
            }
            let short = i + stem.chars().count();
            let mut names = Vec::new();
            if stem == "sep" {
                // sep(?:t(?:ember)?)?
                if self.lit(short, "tember") {
                    names.push(short + 6);
                }
                if self.lit(short, "t") {
                    names.push(short + 1);
                }
            } else if !rest.is_empty() && self.lit(short, rest) {
                names.push(short + rest.chars().count());
            }
            names.push(short);
            for end in names {
                if self.at(end) == Some('.') {
                    ends.push(end + 1);
                }
                ends.push(end);
            }
        }
        ends
    }

    /// A day number `\d{1,2}` with an optional ordinal suffix at `i`: its end.
    fn day(&self, i: usize) -> Option<usize> {
        let n = self.digits(i);
        if !(1..=2).contains(&n) {
            return None;
        }
        let end = i + n;
        Some(DAY_SUFFIXES.iter().find(|s| self.lit(end, s)).map_or(end, |_| end + 2))
    }

    /// `[\s,]+` at `i`: its end.
    fn separators(&self, i: usize) -> Option<usize> {
        let n = self.run(i, |c| c.is_whitespace() || c == ',');
        (n > 0).then_some(i + n)
    }

    /// A year run of `min..=4` digits at `i`, not followed by a letter or digit: its value.
    fn year(&self, i: usize, min: usize) -> Option<u32> {
        let n = self.digits(i);
        if !(min..=4).contains(&n) || self.is(i + n, |c| c.is_ascii_alphanumeric()) {
            return None;
        }
        self.c[i..i + n].iter().collect::<alloc::string::String>().parse().ok()
    }

    /// After a day and a month: also not the hour of a time (`:\d`, or `[ap].m` after spaces).
    fn not_a_time(&self, end: usize) -> bool {
        if self.at(end) == Some(':') && self.digit(end + 1) {
            return false;
        }
        let at = end + self.spaces(end);
        if self.is(at, |c| c == 'a' || c == 'p') {
            let m = if self.at(at + 1) == Some('.') { at + 2 } else { at + 1 };
            if self.at(m) == Some('m') && !self.word(m + 1) {
                return false;
            }
        }
        true
    }

    /// A year after a day and a month, at `i`: its value and end.
    fn dated_year(&self, i: usize) -> Option<(u32, usize)> {
        let year = self.year(i, 1)?;
        let end = i + self.digits(i);
        self.not_a_time(end).then_some((year, end))
    }
}

/// The years `text` writes (upstream's `_source_years`).
pub(crate) fn source_years(text: &str) -> BTreeSet<u32> {
    let t = Text::new(text);
    let mut years = BTreeSet::new();
    let n = t.c.len();
    type Pattern = fn(&Text, usize) -> Option<(u32, usize)>;
    let patterns: [Pattern; 5] = [day_month_year, month_day_year, month_year, year_word, iso_date];
    for pattern in patterns {
        let mut i = 0;
        while i < n {
            match pattern(&t, i) {
                Some((year, end)) => {
                    years.insert(year);
                    i = end.max(i + 1);
                }
                None => i += 1,
            }
        }
    }
    years
}

/// `\b\d{1,2}(st|nd|rd|th)?\s+MONTH\.?[\s,]+(\d{1,4})`, not a time.
fn day_month_year(t: &Text, i: usize) -> Option<(u32, usize)> {
    if !t.digit(i) || (i > 0 && t.word(i - 1)) {
        return None;
    }
    let end = t.day(i)?;
    let gap = t.spaces(end);
    if gap == 0 {
        return None;
    }
    t.month_ends(end + gap).into_iter().find_map(|m| t.dated_year(t.separators(m)?))
}

/// `\bMONTH\.?\s+\d{1,2}(st|nd|rd|th)?\s*,?\s+(\d{1,4})`, not a time.
fn month_day_year(t: &Text, i: usize) -> Option<(u32, usize)> {
    if !t.word_start(i) {
        return None;
    }
    t.month_ends(i).into_iter().find_map(|m| {
        let gap = t.spaces(m);
        if gap == 0 {
            return None;
        }
        let day = t.day(m + gap)?;
        let before = t.spaces(day);
        let year_at = if t.at(day + before) == Some(',') {
            let after = t.spaces(day + before + 1);
            (after > 0).then_some(day + before + 1 + after)?
        } else {
            (before > 0).then_some(day + before)?
        };
        t.dated_year(year_at)
    })
}

/// `\bMONTH\.?[\s,]+(\d{3,4})`.
fn month_year(t: &Text, i: usize) -> Option<(u32, usize)> {
    if !t.word_start(i) {
        return None;
    }
    t.month_ends(i).into_iter().find_map(|m| {
        let at = t.separators(m)?;
        Some((t.year(at, 3)?, at + t.digits(at)))
    })
}

/// `\byear\s+(\d{1,4})`.
fn year_word(t: &Text, i: usize) -> Option<(u32, usize)> {
    if !t.word_start(i) || !t.lit(i, "year") {
        return None;
    }
    let gap = t.spaces(i + 4);
    let at = i + 4 + gap;
    if gap == 0 {
        return None;
    }
    Some((t.year(at, 1)?, at + t.digits(at)))
}

/// `(?<![0-9])(\d{4})(?=[-/]\d{1,2}[-/]\d{1,2}(?![0-9]))`.
fn iso_date(t: &Text, i: usize) -> Option<(u32, usize)> {
    if (i > 0 && t.digit(i - 1)) || t.digits(i) != 4 {
        return None;
    }
    let sep = |j: usize| t.is(j, |c| c == '-' || c == '/');
    let month = i + 5;
    let m = t.digits(month);
    if !sep(i + 4) || !(1..=2).contains(&m) || !sep(month + m) {
        return None;
    }
    let d = t.digits(month + m + 1);
    if !(1..=2).contains(&d) {
        return None;
    }
    Some((t.c[i..i + 4].iter().collect::<alloc::string::String>().parse().ok()?, i + 4))
}

/// Whether `text` reasons relatively about time (upstream's `_relative_cue`).
pub(crate) fn relative_cue(text: &str) -> bool {
    let t = Text::new(text);
    (0..t.c.len()).filter(|&i| t.word_start(i)).any(|i| {
        let whole = |len: usize| !t.word(i + len);
        if RELATIVE.iter().any(|w| t.lit(i, w) && whole(w.chars().count())) {
            return true;
        }
        // in \d+ (days?|weeks?|months?|years?)
        if !t.lit(i, "in ") {
            return false;
        }
        let n = t.digits(i + 3);
        let at = i + 3 + n;
        n > 0
            && t.at(at) == Some(' ')
            && UNITS.iter().any(|u| {
                let end = at + 1 + u.len();
                t.lit(at + 1, u)
                    && (whole(end - i) || (t.at(end) == Some('s') && whole(end + 1 - i)))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn years(text: &str) -> Vec<u32> {
        source_years(text).into_iter().collect()
    }

    #[test]
    fn years_follow_upstreams_patterns() {
        assert_eq!(years("Book it for 5 June 2024 please"), [2024]);
        assert_eq!(years("on June 5th, 2023"), [2023]);
        assert_eq!(years("Sept. 2021 and dec 1999"), [1999, 2021]);
        assert_eq!(years("the year 1066"), [1066]);
        assert_eq!(years("due 2024-03-15 or 2025/3/1"), [2024, 2025]);
        // Times after a day and a month are not years; nor are day-first dates.
        assert!(years("5 June 19:30").is_empty());
        assert!(years("June 5 7 pm").is_empty());
        assert!(years("meet 5/6/24").is_empty());
        assert!(years("12024-03-15 and 2024-03-155").is_empty());
        // A month needs a separator before its year, and a year stops at four digits.
        assert!(years("marching 2024, june 20245").is_empty());
    }

    #[test]
    fn relative_cues_are_whole_words() {
        assert!(relative_cue("Remind me Tomorrow"));
        assert!(relative_cue("in 3 weeks"));
        assert!(relative_cue("in 1 day"));
        assert!(!relative_cue("in 3 weekends"));
        assert!(!relative_cue("nowhere thistle"));
        assert!(!relative_cue("on 5 June 2024"));
    }
}
