//! The chat prompt a Needle model expects, byte-identical to upstream's renderers (Needle 2 and
//! Needle 3 render identically; only their tokenizers' marker sets differ, and those travel in
//! the container):
//!
//! ```text
//! [<|im_start|>system\n{system}<|im_end|>\n]<|im_start|>user\n<tools>{tools}</tools>\n{query}<|im_end|>\n<|im_start|>assistant\n
//! ```
//!
//! `{tools}` is the tool list re-serialised compactly in insertion order with raw UTF-8
//! ([`json::Value::to_json`]); `{system}` is stripped of Python whitespace and the block is
//! left out when nothing remains. Without a system prompt upstream uses `build_prompt`, which
//! returns the bare query when the tool list is empty (or otherwise falsy); with one it uses
//! `render_example`, which always renders the template. [`render`] follows the same split:
//! `system: None` is `build_prompt`, `Some(_)` is `render_example`.
//!
//! Upstream renders tools exactly as given: OpenAI-style `{"type":"function","function":{..}}`
//! entries appear wrapped in the prompt. Its own pipelines unwrap them first (`flat_tools` in
//! the platform client, `from_chat` for training data), and the models are trained on flat
//! schemas, so [`flat_tools`] offers that step separately; [`render`] never rewrites tools.
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use crate::json::{self, Value};
use crate::tokenizer::Span;
use crate::Result;

pub const IM_START: &str = "<|im_start|>";
pub const IM_END: &str = "<|im_end|>";
pub const THINK_START: &str = "<think>";
pub const THINK_END: &str = "</think>";
pub const TOOLS_START: &str = "<tools>";
pub const TOOLS_END: &str = "</tools>";
pub const TOOL_CALL_START: &str = "<tool_call>";
pub const TOOL_CALL_END: &str = "</tool_call>";

/// Renders the prompt for `query` given the tool list as JSON text (empty text means no tool
/// list at all) and an optional system prompt. Fails only when `tools_json` is not JSON.
///
/// The tool JSON is parsed and re-serialised, as upstream does with the tool objects it is
/// handed; JSON text that is already compact comes out unchanged. A tool list that is a JSON
/// string is inserted as its raw content, as upstream does with a `str`.
pub fn render(query: &str, tools_json: &str, system: Option<&str>) -> Result<String> {
    let tools = if tools_json.is_empty() { None } else { Some(json::parse(tools_json)?) };
    Ok(render_value(query, tools.as_ref(), system))
}

/// [`render`] with the tool list already parsed (`None`: no tool list given).
pub fn render_value(query: &str, tools: Option<&Value>, system: Option<&str>) -> String {
    render_prompt(query, tools, system).text
}

/// A rendered prompt, and which of its bytes came from the caller (query, tools, system
/// prompt) rather than from the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    /// Byte ranges of `text` holding caller text, ascending and disjoint.
    pub caller: Vec<Range<usize>>,
}

impl Prompt {
    /// The prompt as tokenizer spans: caller text literal (a marker typed in it stays text),
    /// unless `allow_markers` keeps upstream's behaviour of encoding it as the marker.
    pub fn spans(&self, allow_markers: bool) -> Vec<Span<'_>> {
        let mut spans = Vec::with_capacity(2 * self.caller.len() + 1);
        let mut at = 0;
        for r in &self.caller {
            spans.push(Span::template(&self.text[at..r.start]));
            spans.push(Span { text: &self.text[r.clone()], markers: allow_markers });
            at = r.end;
        }
        spans.push(Span::template(&self.text[at..]));
        spans
    }
}

/// [`render_value`], keeping track of the caller's text.
pub fn render_prompt(query: &str, tools: Option<&Value>, system: Option<&str>) -> Prompt {
    let mut p = Prompt { text: String::new(), caller: Vec::new() };
    let Some(system) = system else {
        match tools {
            Some(tools) if tools.is_truthy() => template(&mut p, query, tools, ""),
            _ => p.push_caller(|out| out.push_str(query)),
        }
        return p;
    };
    // `render_example` defaults a missing tool list to `[]`.
    let empty = Value::Array(Vec::new());
    template(&mut p, query, tools.unwrap_or(&empty), python_strip(system));
    p
}

impl Prompt {
    fn push(&mut self, template: &str) {
        self.text.push_str(template);
    }

    fn push_caller(&mut self, write: impl FnOnce(&mut String)) {
        let start = self.text.len();
        write(&mut self.text);
        if self.text.len() > start {
            self.caller.push(start..self.text.len());
        }
    }
}

fn template(p: &mut Prompt, query: &str, tools: &Value, system: &str) {
    if !system.is_empty() {
        p.push(IM_START);
        p.push("system\n");
        p.push_caller(|out| out.push_str(system));
        p.push(IM_END);
        p.push("\n");
    }
    p.push(IM_START);
    p.push("user\n");
    p.push(TOOLS_START);
    // Upstream inserts a tool list given as a string verbatim instead of serialising it.
    p.push_caller(|out| match tools {
        Value::String(text) => out.push_str(text),
        other => other.write_json(out),
    });
    p.push(TOOLS_END);
    p.push("\n");
    p.push_caller(|out| out.push_str(query));
    p.push(IM_END);
    p.push("\n");
    p.push(IM_START);
    p.push("assistant\n");
}

/// Unwraps OpenAI-style entries (`{"type": "function", "function": {...}}`) to the flat schema
/// the models are trained on, leaving every other entry as it is — upstream's `flat_tools`.
pub fn flat_tools(tools: Value) -> Value {
    let Value::Array(entries) = tools else {
        return tools;
    };
    Value::Array(
        entries
            .into_iter()
            .map(|entry| {
                let is_wrapped = entry.get("type").and_then(Value::as_str) == Some("function")
                    && entry.get("function").is_some();
                match entry {
                    Value::Object(members) if is_wrapped => members
                        .into_iter()
                        .find(|(key, _)| key == "function")
                        .map(|(_, function)| function)
                        .unwrap_or(Value::Null),
                    other => other,
                }
            })
            .collect(),
    )
}

/// Python's `str.strip()`: Unicode whitespace plus the information separators U+001C..U+001F,
/// which Python counts as whitespace and Rust does not.
pub fn python_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &str = r#"[{"name":"f","parameters":{}}]"#;

    #[test]
    fn no_tools_and_no_system_gives_the_bare_query() {
        for tools in ["", "[]", "null", "{}", "\"\""] {
            assert_eq!(render("hi there", tools, None).unwrap(), "hi there");
        }
    }

    #[test]
    fn tools_without_system_render_the_user_turn() {
        assert_eq!(
            render("q", TOOLS, None).unwrap(),
            "<|im_start|>user\n<tools>[{\"name\":\"f\",\"parameters\":{}}]</tools>\nq<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn a_system_prompt_is_stripped_and_forces_the_template() {
        assert_eq!(
            render("q", "[]", Some("\u{1f} be brief\n")).unwrap(),
            "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\n<tools>[]</tools>\nq<|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(
            render("q", "", Some("  ")).unwrap(),
            "<|im_start|>user\n<tools>[]</tools>\nq<|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(
            render("q", "null", Some("s")).unwrap(),
            "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\n<tools>null</tools>\nq<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn tools_are_reserialised_compactly() {
        let rendered = render("q", "[ {\"name\" : \"f\", \"parameters\" : { } } ]", None).unwrap();
        assert!(rendered.contains(&alloc::format!("<tools>{TOOLS}</tools>")));
    }

    #[test]
    fn the_callers_text_is_tracked_and_joins_back_into_the_prompt() {
        let tools = json::parse(TOOLS).unwrap();
        let p = render_prompt("q <|im_end|>", Some(&tools), Some(" sys "));
        let caller: Vec<&str> = p.caller.iter().map(|r| &p.text[r.clone()]).collect();
        assert_eq!(caller, ["sys", TOOLS, "q <|im_end|>"]);
        for allow in [false, true] {
            let spans = p.spans(allow);
            assert_eq!(spans.iter().map(|s| s.text).collect::<String>(), p.text);
            assert_eq!(spans.iter().filter(|s| !s.markers).count(), if allow { 0 } else { 3 });
        }
        let bare = render_prompt("just text", None, None);
        assert_eq!((bare.text.as_str(), bare.caller.as_slice()), ("just text", &[0..9][..]));
    }

    #[test]
    fn invalid_tool_json_is_an_error() {
        assert!(matches!(render("q", "[{", None), Err(crate::Error::BadJson { .. })));
    }

    #[test]
    fn flat_tools_unwraps_only_function_entries() {
        let tools = json::parse(
            r#"[{"type":"function","function":{"name":"a"}},{"name":"b"},{"type":"other","function":1},{"type":"function"},3]"#,
        )
        .unwrap();
        assert_eq!(
            flat_tools(tools).to_json(),
            r#"[{"name":"a"},{"name":"b"},{"type":"other","function":1},{"type":"function"},3]"#
        );
    }
}
