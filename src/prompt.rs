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
mod envelope;

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use crate::json::{self, Value};
use crate::tokenizer::Span;
use crate::{Error, Result};

pub const IM_START: &str = "<|im_start|>";
pub const IM_END: &str = "<|im_end|>";
pub const THINK_START: &str = "<think>";
pub const THINK_END: &str = "</think>";
pub const TOOLS_START: &str = "<tools>";
pub const TOOLS_END: &str = "</tools>";
pub const TOOL_CALL_START: &str = "<tool_call>";
pub const TOOL_CALL_END: &str = "</tool_call>";
pub const TOOL_RESULT_START: &str = "<tool_result>";
pub const TOOL_RESULT_END: &str = "</tool_result>";

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
    // A single turn always has a user turn to answer, so this cannot fail.
    render_conversation(&[], query, tools, system).map(|r| r.text).unwrap_or_default()
}

/// Who wrote a turn of a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    /// The model: its completion text exactly as generated (`Completion::response.text`).
    Assistant,
    /// The results of the calls the model made, as JSON text.
    Tool,
}

/// One earlier turn of a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn<'t> {
    pub role: Role,
    pub text: &'t str,
}

/// A rendered prompt and two byte offsets into it where requests are likely to part: the text
/// before `head` holds only the system prompt and tool list; the text before `newest` does
/// not depend on the newest message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// Where the first user-side turn's text starts, after the system prompt and tool list.
    pub head: usize,
    pub newest: usize,
    /// Byte ranges of `text` written by the caller, ascending and disjoint: the system prompt,
    /// the tool list, user text, tool results and assistant turns outside their tool-call
    /// envelope ([`envelope`]); not the template.
    pub caller: Vec<Range<usize>>,
}

impl Rendered {
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

/// Appends what `write` writes to `out`, recording it in `caller` as the caller's text.
fn push_caller(out: &mut String, caller: &mut Vec<Range<usize>>, write: impl FnOnce(&mut String)) {
    let start = out.len();
    write(out);
    if out.len() > start {
        caller.push(start..out.len());
    }
}

/// Renders a conversation: the earlier `turns`, then `query` as a new user turn, then the
/// assistant's opening tag. With no earlier turns this is the single-turn prompt above, byte
/// for byte. Later turns continue the same chat format:
///
/// ```text
/// [<|im_start|>system\n{system}<|im_end|>\n]
/// <|im_start|>user\n<tools>{tools}</tools>\n{first user text}<|im_end|>\n
/// <|im_start|>assistant\n{completion text as generated}<|im_end|>\n
/// <|im_start|>user\n<tool_result>{results JSON}</tool_result><|im_end|>\n
/// <|im_start|>user\n{later user text}<|im_end|>\n
/// <|im_start|>assistant\n
/// ```
///
/// - The tool list is written once, in the first user-side turn, where the single-turn prompt
///   has it; a conversation therefore shares its whole history with the next turn's prompt.
/// - An assistant turn is the model's raw completion text (reasoning and `<tool_call>` block
///   included), so the rendered history tokenizes to the ids the model generated wherever
///   the tokenizer round-trips them. It is caller text all the same: only its envelope's
///   markers are markers ([`envelope`]).
/// - Tool results are a user-side turn wrapped in the tokenizer's `<tool_result>` markers:
///   the models know only the system, user and assistant roles.
/// - An empty `query` after earlier turns adds no user turn: the model answers the last turn
///   (how an agent loop feeds tool results back).
/// - Earlier turns always use the template, even with neither tools nor system (the tool list
///   is then `[]`); the bare-query prompt exists only for a single turn, as upstream's
///   `build_prompt`.
///
/// Fails (`InvalidArgument`) when there is nothing for the model to answer: no user-side turn
/// at all, or earlier turns ending with an assistant turn and no new query.
pub fn render_conversation(
    turns: &[Turn],
    query: &str,
    tools: Option<&Value>,
    system: Option<&str>,
) -> Result<Rendered> {
    if turns.is_empty() && system.is_none() && !tools.is_some_and(Value::is_truthy) {
        let caller = if query.is_empty() { Vec::new() } else { alloc::vec![0..query.len()] };
        return Ok(Rendered { text: String::from(query), head: 0, newest: 0, caller });
    }
    let newest_turn = Turn { role: Role::User, text: query };
    let all: Vec<Turn> = match turns.last() {
        Some(_) if query.is_empty() => turns.to_vec(),
        _ => turns.iter().copied().chain([newest_turn]).collect(),
    };
    if all.last().is_some_and(|t| t.role == Role::Assistant)
        || all.iter().all(|t| t.role == Role::Assistant)
    {
        return Err(Error::InvalidArgument {
            name: "turns",
            reason: "a conversation must end with a user or tool turn",
        });
    }
    // `render_example` defaults a missing tool list to `[]`.
    let empty = Value::Array(Vec::new());
    let mut tools = Some(tools.unwrap_or(&empty));
    let system = system.map(python_strip).unwrap_or("");
    let mut out = String::new();
    let mut caller = Vec::new();
    if !system.is_empty() {
        out.push_str(IM_START);
        out.push_str("system\n");
        push_caller(&mut out, &mut caller, |out| out.push_str(system));
        out.push_str(IM_END);
        out.push('\n');
    }
    let (mut head, mut newest) = (None, 0);
    for turn in &all {
        out.push_str(IM_START);
        out.push_str(if turn.role == Role::Assistant { "assistant\n" } else { "user\n" });
        if let Some(tools) = tools.filter(|_| turn.role != Role::Assistant) {
            out.push_str(TOOLS_START);
            // Upstream inserts a tool list given as a string verbatim instead of serialising it.
            push_caller(&mut out, &mut caller, |out| match tools {
                Value::String(text) => out.push_str(text),
                other => other.write_json(out),
            });
            out.push_str(TOOLS_END);
            out.push('\n');
        }
        if turn.role != Role::Assistant {
            tools = None;
        }
        newest = out.len();
        if turn.role != Role::Assistant {
            head.get_or_insert(newest);
        }
        match turn.role {
            Role::Tool => {
                out.push_str(TOOL_RESULT_START);
                push_caller(&mut out, &mut caller, |out| out.push_str(turn.text));
                out.push_str(TOOL_RESULT_END);
            }
            Role::User => push_caller(&mut out, &mut caller, |out| out.push_str(turn.text)),
            Role::Assistant => {
                let at = out.len();
                out.push_str(turn.text);
                caller.extend(
                    envelope::literal_parts(turn.text)
                        .into_iter()
                        .map(|r| at + r.start..at + r.end),
                );
            }
        }
        out.push_str(IM_END);
        out.push('\n');
    }
    out.push_str(IM_START);
    out.push_str("assistant\n");
    Ok(Rendered { text: out, head: head.unwrap_or(newest), newest, caller })
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
        let turns = [
            Turn { role: Role::User, text: "q1" },
            Turn { role: Role::Assistant, text: "<tool_call>[]</tool_call>" },
            Turn { role: Role::Tool, text: "{}" },
        ];
        let p = render_conversation(&turns, "q <|im_end|>", Some(&tools), Some(" sys ")).unwrap();
        let caller: Vec<&str> = p.caller.iter().map(|r| &p.text[r.clone()]).collect();
        assert_eq!(caller, ["sys", TOOLS, "q1", "[]", "{}", "q <|im_end|>"]);
        for allow in [false, true] {
            let spans = p.spans(allow);
            assert_eq!(spans.iter().map(|s| s.text).collect::<String>(), p.text);
            assert_eq!(spans.iter().filter(|s| !s.markers).count(), if allow { 0 } else { 6 });
        }
        let bare = render_conversation(&[], "just text", None, None).unwrap();
        let whole = [core::ops::Range { start: 0, end: 9 }]; // one caller span: the whole text
        assert_eq!((bare.text.as_str(), bare.caller.as_slice()), ("just text", &whole[..]));
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
