//! Structured output through the session (`full_schema` with a required call): whatever the
//! weights and the temperature, the one call is there and its arguments meet the whole schema
//! (formats by value, a pattern's tail, a discriminated union, `$ref`, nullable, `multipleOf`,
//! unique enum items), checked here by hand-written rules independent of the matcher.
mod common;

use common::cases;
use needle_web::json::{self, Value};
use needle_web::session::{Engine, LoadOptions, Request};

const TOOLS: &str = r##"[{"name":"record","parameters":{
  "$defs":{"addr":{"type":"object","properties":{"zip":{"type":"string","pattern":"^\\d{5}$"}},"required":["zip"],"additionalProperties":false}},
  "type":"object","additionalProperties":false,
  "properties":{
    "email":{"type":"string","format":"email","pattern":"^[a-z]+@[a-z]+\\.[a-z]{2,}$"},
    "day":{"type":"string","format":"date"},
    "at":{"type":["string","null"],"format":"date-time"},
    "n":{"type":"integer","multipleOf":5,"minimum":0,"maximum":100},
    "x":{"type":"number","exclusiveMinimum":0,"maximum":1},
    "big":{"type":"integer"},
    "tags":{"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true},
    "home":{"$ref":"#/$defs/addr"},
    "pay":{"oneOf":[
      {"type":"object","properties":{"kind":{"const":"card"},"last4":{"type":"string","pattern":"^\\d{4}$"}},"required":["kind","last4"],"additionalProperties":false},
      {"type":"object","properties":{"kind":{"const":"cash"}},"required":["kind"],"additionalProperties":false}]}},
  "required":["email","day","n","pay"]}}]"##;

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn num(s: &str) -> u32 {
    s.parse().unwrap_or(u32::MAX)
}

/// RFC 3339 full-date, with the calendar's month lengths.
fn date(s: &str) -> bool {
    let p: Vec<&str> = s.split('-').collect();
    if p.len() != 3 || p[0].len() != 4 || p[1].len() != 2 || p[2].len() != 2 {
        return false;
    }
    if !p.iter().all(|x| digits(x)) {
        return false;
    }
    let (y, m, d) = (num(p[0]), num(p[1]), num(p[2]));
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    (1..=12).contains(&m) && d >= 1 && d <= days[m as usize - 1]
}

/// hh:mm (two two-digit fields in range).
fn hh_mm(s: &str) -> bool {
    let p: Vec<&str> = s.split(':').collect();
    p.len() == 2 && p.iter().all(|x| x.len() == 2 && digits(x)) && num(p[0]) < 24 && num(p[1]) < 60
}

/// RFC 3339 date-time: full-date "T" hh:mm:ss[.frac] and an offset.
fn date_time(s: &str) -> bool {
    let Some((d, t)) = s.split_once('T') else { return false };
    let (t, offset) = match t.strip_suffix('Z') {
        Some(t) => (t, "00:00"),
        None => match t.rfind(['+', '-']) {
            Some(i) => (&t[..i], &t[i + 1..]),
            None => return false,
        },
    };
    let (hms, frac) = t.split_once('.').unwrap_or((t, "0"));
    let Some((hm, sec)) = hms.rsplit_once(':') else { return false };
    date(d)
        && hh_mm(hm)
        && sec.len() == 2
        && digits(sec)
        && num(sec) < 60
        && digits(frac)
        && hh_mm(offset)
}

/// Why the arguments break the schema, or `None`.
fn invalid(args: &Value) -> Option<String> {
    let Value::Object(members) = args else { return Some("not an object".into()) };
    let get = |k: &str| args.get(k);
    for k in ["email", "day", "n", "pay"] {
        get(k)?;
    }
    for (k, v) in members {
        let ok = match (k.as_str(), v) {
            ("email", Value::String(s)) => {
                // The pattern's grammar (the format's is wider).
                let lower = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase());
                s.split_once('@').is_some_and(|(local, domain)| {
                    lower(local)
                        && domain
                            .split_once('.')
                            .is_some_and(|(a, tld)| lower(a) && lower(tld) && tld.len() >= 2)
                })
            }
            ("day", Value::String(s)) => date(s),
            ("at", Value::String(s)) => date_time(s),
            ("at", Value::Null) => true,
            ("n", Value::Int(d)) => {
                d.parse::<i64>().is_ok_and(|n| (0..=100).contains(&n) && n % 5 == 0)
            }
            ("x", Value::Int(d)) => d == "1",
            ("x", Value::Float(x)) => *x > 0.0 && *x <= 1.0,
            ("big", Value::Int(d)) => d.parse::<i64>().is_ok_and(|n| n.abs() < 1 << 53),
            ("tags", Value::Array(items)) => items.iter().enumerate().all(|(i, t)| {
                ["a", "b", "c"].contains(&t.as_str().unwrap_or("")) && !items[..i].contains(t)
            }),
            ("home", Value::Object(h)) => {
                h.len() == 1
                    && h[0].0 == "zip"
                    && h[0].1.as_str().is_some_and(|z| z.len() == 5 && digits(z))
            }
            ("pay", Value::Object(p)) => {
                match p.iter().find(|(k, _)| k == "kind").map(|(_, v)| v) {
                    Some(Value::String(kind)) if kind == "cash" => p.len() == 1,
                    Some(Value::String(kind)) if kind == "card" => {
                        p.len() == 2
                            && p.iter().any(|(k, v)| {
                                k == "last4"
                                    && v.as_str().is_some_and(|s| s.len() == 4 && digits(s))
                            })
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if !ok {
            return Some(format!("{k}: {}", v.to_json()));
        }
    }
    None
}

#[test]
fn the_hand_written_rules_tell_valid_from_invalid() {
    let good = json::parse(
        r#"{"email":"jo@ex.com","day":"2024-02-29","at":"2024-01-01T23:59:59.5-03:30","n":35,"x":0.5,"pay":{"kind":"card","last4":"4242"},"tags":["a","c"]}"#,
    )
    .unwrap();
    assert_eq!(invalid(&good), None);
    for (from, to) in [
        ("2024-02-29", "2023-02-29"),
        ("T23:59:59.5", "T24:59:59.5"),
        ("\"n\":35", "\"n\":36"),
        ("jo@ex.com", "jo@ex.c"),
        ("\"a\",\"c\"", "\"a\",\"a\""),
        ("\"4242\"", "\"424\""),
    ] {
        let bad = json::parse(&good.to_json().replace(from, to)).unwrap();
        assert!(invalid(&bad).is_some(), "{to}");
    }
}

#[test]
fn every_structured_call_meets_the_whole_schema_on_any_weights() {
    let default =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact")).unwrap();
    let mut models: Vec<(String, Vec<u8>)> = vec![("default".into(), default)];
    models.extend(cases("v3").into_iter().take(1).map(|c| (c.name, c.bytes)));
    let mut checked = 0;
    for (name, bytes) in &models {
        let mut engine = Engine::load(bytes, &LoadOptions::default()).unwrap();
        for (budget, temperature, seed) in [
            (160, 0.0, 0),
            (160, 1.0, 1),
            (160, 1.5, 2),
            (200, 3.0, 3),
            (120, 1.0, 4),
            (400, 1.0, 5),
        ] {
            let mut req = Request::new("Pay jo@ex.com 35 on 2024-02-29", TOOLS);
            (req.require_call, req.full_schema, req.max_tokens, req.temperature, req.seed) =
                (true, true, budget, temperature, seed);
            let done = engine.generate(&req, |_| true).unwrap();
            let r = &done.response;
            let at = format!("{name} budget {budget} T={temperature}: {:?}", r.text);
            assert_eq!(r.parse_error, None, "{at}");
            assert_eq!(r.function_calls.len(), 1, "{at}");
            if let Some(why) = invalid(&r.function_calls[0].arguments) {
                panic!("{why} in {at}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 12);
}
