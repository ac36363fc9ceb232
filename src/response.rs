//! Reading a completion back into reasoning and function calls.
//!
//! Upstream trains the assistant turn as
//! `[<think>\n{reasoning}\n</think>\n]<tool_call>{answers}</tool_call><|im_end|>` where
//! `{answers}` is one compact JSON *array* of `{"name", "arguments"}` objects (`[]` is a
//! refusal), and its engine reports `{type: "call" | "refuse", function_calls: [{name,
//! arguments}], ...}`. This parser reads that shape and is lenient where generation can stop
//! early: text after `<|im_end|>` is ignored, a missing `</think>` ends the reasoning at the
//! first `<tool_call>`, a missing `</tool_call>` takes the payload to the end, a payload that
//! is a single object counts as one call, and several `<tool_call>` blocks are concatenated.
//! A payload that is not JSON, or an entry without a string `name`, sets `parse_error` (the
//! first problem found) and contributes no call.
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::json::{self, Value};
use crate::prompt::{python_strip, IM_END, THINK_END, THINK_START, TOOL_CALL_END, TOOL_CALL_START};
use crate::{text_search, Error};

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    pub name: String,
    /// The `arguments` member as generated (`{}` when absent).
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The stripped `<think>` block, when there is a non-empty one.
    pub reasoning: Option<String>,
    pub function_calls: Vec<FunctionCall>,
    /// The completion exactly as given.
    pub text: String,
    pub parse_error: Option<String>,
}

impl Response {
    /// Upstream's response type: `"call"` when there are calls, else `"refuse"`.
    pub fn kind(&self) -> &'static str {
        if self.function_calls.is_empty() {
            "refuse"
        } else {
            "call"
        }
    }

    /// The envelope as a JSON object in upstream's key names: `type`, `function_calls`, then
    /// `reasoning` and `parse_error` when present, then `text`.
    pub fn to_value(&self) -> Value {
        let calls = self
            .function_calls
            .iter()
            .map(|c| {
                Value::Object(alloc::vec![
                    ("name".to_string(), Value::String(c.name.clone())),
                    ("arguments".to_string(), c.arguments.clone()),
                ])
            })
            .collect();
        let mut members = alloc::vec![
            ("type".to_string(), Value::String(self.kind().to_string())),
            ("function_calls".to_string(), Value::Array(calls)),
        ];
        if let Some(reasoning) = &self.reasoning {
            members.push(("reasoning".to_string(), Value::String(reasoning.clone())));
        }
        if let Some(error) = &self.parse_error {
            members.push(("parse_error".to_string(), Value::String(error.clone())));
        }
        members.push(("text".to_string(), Value::String(self.text.clone())));
        Value::Object(members)
    }
}

pub fn parse(text: &str) -> Response {
    let body = text_search::split_once(text, IM_END).map_or(text, |(before, _)| before);
    let mut response = Response {
        reasoning: None,
        function_calls: Vec::new(),
        text: String::from(text),
        parse_error: None,
    };

    let mut rest = body;
    if let Some((_, after_open)) = text_search::split_once(body, THINK_START) {
        let (thought, after) = match text_search::split_once(after_open, THINK_END) {
            Some((thought, after)) => (thought, after),
            None => match text_search::find(after_open, TOOL_CALL_START) {
                Some(at) => after_open.split_at(at),
                None => (after_open, ""),
            },
        };
        let thought = python_strip(thought);
        if !thought.is_empty() {
            response.reasoning = Some(String::from(thought));
        }
        rest = after;
    }

    while let Some((_, after_open)) = text_search::split_once(rest, TOOL_CALL_START) {
        let (payload, after) =
            text_search::split_once(after_open, TOOL_CALL_END).unwrap_or((after_open, ""));
        rest = after;
        match json::parse(payload) {
            Ok(Value::Array(entries)) => {
                for entry in entries {
                    collect_call(entry, &mut response);
                }
            }
            Ok(entry) => collect_call(entry, &mut response),
            Err(e) => note(&mut response, describe(&e)),
        }
    }
    response
}

fn collect_call(entry: Value, response: &mut Response) {
    let Value::Object(members) = entry else {
        note(response, String::from("tool call entry is not an object"));
        return;
    };
    let mut name = None;
    let mut arguments = Value::Object(Vec::new());
    for (key, value) in members {
        match (key.as_str(), value) {
            ("name", Value::String(n)) => name = Some(n),
            ("arguments", v) => arguments = v,
            _ => {}
        }
    }
    match name {
        Some(name) => response.function_calls.push(FunctionCall { name, arguments }),
        None => note(response, String::from("tool call entry has no string name")),
    }
}

fn note(response: &mut Response, message: String) {
    response.parse_error.get_or_insert(message);
}

fn describe(e: &Error) -> String {
    match e {
        Error::BadJson { offset, reason } => {
            format!("tool call payload is not JSON: {reason} at byte {offset}")
        }
        other => format!("tool call payload is not JSON: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_block_and_calls_are_read_from_the_trained_format() {
        let text = "<think>\nthe user wants lights\n</think>\n<tool_call>[{\"name\":\"set_lights\",\"arguments\":{\"room\":\"bedroom\",\"level\":20}},{\"name\":\"lock_door\",\"arguments\":{\"door\":\"front\"}}]</tool_call><|im_end|>";
        let r = parse(text);
        assert_eq!(r.reasoning.as_deref(), Some("the user wants lights"));
        assert_eq!(r.function_calls.len(), 2);
        assert_eq!(r.function_calls[0].name, "set_lights");
        assert_eq!(r.function_calls[0].arguments.to_json(), "{\"room\":\"bedroom\",\"level\":20}");
        assert_eq!(r.function_calls[1].name, "lock_door");
        assert_eq!(r.parse_error, None);
        assert_eq!(r.text, text);
        assert_eq!(r.kind(), "call");
    }

    #[test]
    fn an_empty_call_list_is_a_refusal() {
        let r = parse("<tool_call>[]</tool_call><|im_end|>");
        assert!(r.function_calls.is_empty() && r.reasoning.is_none() && r.parse_error.is_none());
        assert_eq!(r.kind(), "refuse");
    }

    #[test]
    fn several_blocks_and_single_objects_all_count() {
        let r = parse("<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call><tool_call>[{\"name\":\"b\"}]</tool_call>");
        let names: Vec<&str> = r.function_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(r.function_calls[1].arguments, Value::Object(Vec::new()));
    }

    #[test]
    fn an_invalid_payload_sets_parse_error_and_keeps_other_calls() {
        let r = parse(
            "<tool_call>[{\"name\":\"a\",</tool_call><tool_call>[{\"name\":\"b\"}]</tool_call>",
        );
        assert!(r.parse_error.as_deref().unwrap().starts_with("tool call payload is not JSON"));
        assert_eq!(r.function_calls.len(), 1);
        assert_eq!(r.function_calls[0].name, "b");
    }

    #[test]
    fn entries_without_a_name_are_reported() {
        let r = parse("<tool_call>[{\"arguments\":{}},3]</tool_call>");
        assert!(r.function_calls.is_empty());
        assert_eq!(r.parse_error.as_deref(), Some("tool call entry has no string name"));
    }

    #[test]
    fn missing_close_tags_are_tolerated() {
        let r = parse("<think>\nhmm\n<tool_call>[{\"name\":\"a\",\"arguments\":{\"x\":1}}]");
        assert_eq!(r.reasoning.as_deref(), Some("hmm"));
        assert_eq!(r.function_calls.len(), 1);
        assert_eq!(r.parse_error, None);
        let truncated = parse("<tool_call>[{\"name\":\"a\",\"argu");
        assert!(truncated.function_calls.is_empty() && truncated.parse_error.is_some());
        let thinking = parse("<think>\nstill thinking");
        assert_eq!(thinking.reasoning.as_deref(), Some("still thinking"));
    }

    #[test]
    fn text_after_the_end_of_turn_is_ignored() {
        let r =
            parse("<tool_call>[]</tool_call><|im_end|><tool_call>[{\"name\":\"x\"}]</tool_call>");
        assert!(r.function_calls.is_empty());
    }

    #[test]
    fn plain_text_has_no_calls_and_no_error() {
        let r = parse("I cannot help with that.");
        assert!(r.function_calls.is_empty() && r.parse_error.is_none() && r.reasoning.is_none());
    }

    #[test]
    fn the_envelope_uses_upstream_key_names() {
        let r = parse("<think>\nr\n</think>\n<tool_call>[{\"name\":\"a\",\"arguments\":{\"é\":1.5}}]</tool_call>");
        assert_eq!(
            r.to_value().to_json(),
            "{\"type\":\"call\",\"function_calls\":[{\"name\":\"a\",\"arguments\":{\"é\":1.5}}],\"reasoning\":\"r\",\"text\":\"<think>\\nr\\n</think>\\n<tool_call>[{\\\"name\\\":\\\"a\\\",\\\"arguments\\\":{\\\"é\\\":1.5}}]</tool_call>\"}"
        );
    }
}
