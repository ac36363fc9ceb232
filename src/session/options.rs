//! A [`Request`]'s options by name: the one table the JS surface (a request object parsed from
//! JSON), the CLI (its flags) and the surface-consistency test read, so an option is declared
//! once, here, with its default in [`Request::new`].
//!
//! Names are the JS spelling (`maxTokens`); a CLI flag is the kebab-case spelling unless the
//! table names another. `null` means "the default", as JS's `??` does.
use alloc::vec::Vec;

use super::request::Request;
use crate::json::Value;
use crate::prompt::{Role, Turn};
use crate::{Error, Result};

/// What an option's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string (or, for `turns`, an array of `{role, content}`).
    Text,
    /// A whole number from 0 to 2^32 - 1.
    Count,
    /// A whole number from 0 to 2^53 - 1 (what a JS number holds exactly).
    Seed,
    /// Any finite number.
    Number,
    /// `true` or `false` (a CLI switch).
    Flag,
}

/// One option of a request.
pub struct RequestOption {
    pub name: &'static str,
    pub kind: Kind,
    /// The CLI's flag: `--` and the kebab-case name, unless upstream's CLI names it otherwise;
    /// `None`: the CLI takes the value another way (a file, a preset, stdin).
    pub flag: Option<&'static str>,
    set: for<'r> fn(&mut Request<'r>, &'r Value) -> Result<()>,
}

const fn opt(
    name: &'static str,
    kind: Kind,
    flag: Option<&'static str>,
    set: for<'r> fn(&mut Request<'r>, &'r Value) -> Result<()>,
) -> RequestOption {
    RequestOption { name, kind, flag, set }
}

/// Every option a request takes. `turns` is read by [`turns`] (it needs storage of its own).
pub const OPTIONS: &[RequestOption] = &[
    opt("query", Kind::Text, None, |r, v| text("query", v).map(|x| r.query = x)),
    opt("tools", Kind::Text, None, |r, v| text("tools", v).map(|x| r.tools_json = x)),
    opt("system", Kind::Text, None, |r, v| text("system", v).map(|x| r.system = Some(x))),
    opt("turns", Kind::Text, None, |_, _| Ok(())),
    opt("date", Kind::Text, None, |r, v| text("date", v).map(|x| r.date = Some(x))),
    opt("maxTokens", Kind::Count, Some("--max-tokens"), |r, v| {
        count("maxTokens", v).map(|x| r.max_tokens = x)
    }),
    opt("temperature", Kind::Number, Some("--temperature"), |r, v| {
        num("temperature", v).map(|x| r.temperature = x as f32)
    }),
    opt("seed", Kind::Seed, Some("--seed"), |r, v| seed(v).map(|x| r.seed = x)),
    opt("topK", Kind::Count, Some("--top-k"), |r, v| count("topK", v).map(|x| r.top_k = x)),
    opt("topP", Kind::Number, Some("--top-p"), |r, v| num("topP", v).map(|x| r.top_p = x as f32)),
    opt("constrained", Kind::Flag, Some("--constrained"), |r, v| {
        flag("constrained", v).map(|x| r.constrained = x)
    }),
    opt("extractive", Kind::Flag, Some("--extractive"), |r, v| {
        flag("extractive", v).map(|x| r.extractive = x)
    }),
    opt("valueSearch", Kind::Flag, Some("--value-search"), |r, v| {
        flag("valueSearch", v).map(|x| r.value_search = x)
    }),
    opt("requireCall", Kind::Flag, Some("--require-call"), |r, v| {
        flag("requireCall", v).map(|x| r.require_call = x)
    }),
    opt("fullSchema", Kind::Flag, Some("--full-schema"), |r, v| {
        flag("fullSchema", v).map(|x| r.full_schema = x)
    }),
    opt("allowControlTokens", Kind::Flag, Some("--raw-markers"), |r, v| {
        flag("allowControlTokens", v).map(|x| r.allow_control_tokens = x)
    }),
];

/// The option named `name`.
pub fn option(name: &str) -> Option<&'static RequestOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

impl<'r> Request<'r> {
    /// The request an options object describes (`{"query": …, "maxTokens": 48, …}`), the
    /// defaults of [`Request::new`] for what it leaves out. `turns` holds [`turns`] of the same
    /// object. An unknown name or a value of the wrong type is `invalid_argument`.
    pub fn from_options(object: &'r Value, turns: &'r [Turn<'r>]) -> Result<Self> {
        let mut req = Request::new("", "");
        req.turns = turns;
        req.apply(object)?;
        Ok(req)
    }

    /// Sets the options `object` names, leaving the others as they are.
    pub fn apply(&mut self, object: &'r Value) -> Result<()> {
        let Value::Object(members) = object else {
            return Err(bad("request", "expected an object of options"));
        };
        for (name, value) in members {
            let option = option(name)
                .ok_or(bad("request", "unknown option (index.d.ts CompleteOptions lists them)"))?;
            if *value != Value::Null {
                (option.set)(self, value)?;
            }
        }
        Ok(())
    }
}

/// The conversation an options object's `turns` holds (`[{role, content}]`, oldest first).
pub fn turns(object: &Value) -> Result<Vec<Turn<'_>>> {
    let wrong = || bad("turns", "expected an array of {role, content}");
    let items = match object.get("turns") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(v) => v.as_array().ok_or_else(wrong)?,
    };
    items
        .iter()
        .map(|item| {
            let role = match item.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("tool") => Role::Tool,
                _ => return Err(bad("turns", "role must be \"user\", \"assistant\" or \"tool\"")),
            };
            let text = item.get("content").and_then(Value::as_str);
            Ok(Turn { role, text: text.ok_or(bad("turns", "content must be a string"))? })
        })
        .collect()
}

pub(super) fn bad(name: &'static str, reason: &'static str) -> Error {
    Error::InvalidArgument { name, reason }
}

pub(super) fn text<'v>(name: &'static str, v: &'v Value) -> Result<&'v str> {
    v.as_str().ok_or(bad(name, "expected a string"))
}

fn flag(name: &'static str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(bad(name, "expected true or false")),
    }
}

fn num(name: &'static str, v: &Value) -> Result<f64> {
    let n = match v {
        Value::Int(digits) => crate::float_parse::parse(digits),
        Value::Float(x) => Some(*x),
        _ => None,
    };
    n.filter(|x: &f64| x.is_finite()).ok_or(bad(name, "expected a finite number"))
}

/// A whole number from 0 to 2^32 - 1.
pub(super) fn count(name: &'static str, v: &Value) -> Result<usize> {
    let n = num(name, v)?;
    if (0.0..=u32::MAX as f64).contains(&n) && n == libm::trunc(n) {
        Ok(n as usize)
    } else {
        Err(bad(name, "expected a whole number from 0 to 2^32-1"))
    }
}

/// A whole number a JS number represents exactly (0 to 2^53 - 1).
fn seed(v: &Value) -> Result<u64> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    let n = num("seed", v)?;
    if (0.0..=MAX_SAFE_INTEGER).contains(&n) && n == libm::trunc(n) {
        Ok(n as u64)
    } else {
        Err(bad("seed", "expected a whole number from 0 to 2^53-1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use alloc::string::String;

    #[test]
    fn an_options_object_sets_what_it_names_and_keeps_the_defaults() {
        let v = json::parse(r#"{"query":"hi","maxTokens":7,"temperature":0.5,"seed":3,"valueSearch":true,"system":null,
            "turns":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}"#)
        .unwrap();
        let t = turns(&v).unwrap();
        let r = Request::from_options(&v, &t).unwrap();
        let mut want = Request::new("hi", "");
        want.turns = &t;
        want.max_tokens = 7;
        want.temperature = 0.5;
        want.seed = 3;
        want.value_search = true;
        assert_eq!(r, want);
        assert_eq!(t[1], Turn { role: Role::Assistant, text: "b" });
    }

    #[test]
    fn unknown_and_mistyped_options_are_invalid_arguments() {
        for (text, name) in [
            (r#"{"maxToken":7}"#, "request"),
            (r#"{"maxTokens":"7"}"#, "maxTokens"),
            (r#"{"maxTokens":-1}"#, "maxTokens"),
            (r#"{"topK":1.5}"#, "topK"),
            (r#"{"seed":9007199254740992}"#, "seed"),
            (r#"{"constrained":1}"#, "constrained"),
            (r#"{"temperature":"hot"}"#, "temperature"),
            (r#"{"tools":[]}"#, "tools"),
            (r#"[]"#, "request"),
        ] {
            let v = json::parse(text).unwrap();
            match Request::from_options(&v, &[]) {
                Err(Error::InvalidArgument { name: got, .. }) => assert_eq!(got, name, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        let v = json::parse(r#"{"turns":[{"role":"system","content":"x"}]}"#).unwrap();
        assert!(matches!(turns(&v), Err(Error::InvalidArgument { name: "turns", .. })));
    }

    #[test]
    fn cli_flags_are_the_kebab_case_names_but_the_raw_markers() {
        for o in OPTIONS {
            let Some(flag) = o.flag else { continue };
            let mut kebab = String::from("--");
            for c in o.name.chars() {
                if c.is_ascii_uppercase() {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            let want = if o.name == "allowControlTokens" { "--raw-markers" } else { &kebab };
            assert_eq!(flag, want);
        }
    }
}
