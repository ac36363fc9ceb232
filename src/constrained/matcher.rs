//! The assistant turn as constrained decoding allows it, byte by byte:
//!
//! ```text
//! ws [ "<think>" any text "</think>" ws ] "<tool_call>" ws "[" ( "]" | call ("," call)* "]" ) ws "</tool_call>"
//! call = "{" "\"name\"" ":" "\"" NAME "," "\"arguments\"" ":" ARGUMENTS "}"
//! ```
//!
//! (JSON whitespace allowed between the tokens of the call list.) NAME is one of the tools';
//! ARGUMENTS is an object whose keys are that tool's declared keys, each at most once, whose
//! values fit each key's kind, and which closes only once the required keys are written. A
//! tool without declared properties takes any object. Without tools the turn is the refusal
//! alone, `<tool_call>` first (no leading whitespace, no reasoning). In extractive mode a
//! string argument (not an enum) must be a piece of the request ([`super::span`]). Neither the
//! reasoning nor a string spells a marker the response parser reads as structure
//! ([`super::markers`]). After `</tool_call>` only a stop token may follow. Every prefix this
//! accepts can still be completed, so masking never strands the model.
use super::full_value::FullValue;
use super::json_value::{JsonValue, Step as ValueStep};
use super::literals::{Cursor, LiteralSet};
use super::markers::{self, Watch};
use super::schema::{Grammar, JsonType, Length, ValueKind};
use crate::prompt::{THINK_END, THINK_START, TOOL_CALL_END, TOOL_CALL_START};

/// Whitespace bytes accepted in a row: enough for any formatting, not for an endless run.
const MAX_WHITESPACE: u8 = 8;

/// Fixed text the grammar expects next (whitespace may precede it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Literal {
    ToolCallOpen,
    ListOpen,
    NameKey,
    NameColon,
    NameQuote,
    NameComma,
    ArgumentsKey,
    ArgumentsColon,
    ArgumentsOpen,
    KeyColon,
    CallClose,
    ToolCallClose,
}

impl Literal {
    fn bytes(self) -> &'static [u8] {
        match self {
            Literal::ToolCallOpen => TOOL_CALL_START.as_bytes(),
            Literal::ListOpen => b"[",
            Literal::NameKey => b"\"name\"",
            Literal::NameColon | Literal::ArgumentsColon | Literal::KeyColon => b":",
            Literal::NameQuote => b"\"",
            Literal::NameComma => b",",
            Literal::ArgumentsKey => b"\"arguments\"",
            Literal::ArgumentsOpen => b"{",
            Literal::CallClose => b"}",
            Literal::ToolCallClose => TOOL_CALL_END.as_bytes(),
        }
    }
}

const THINK_OPEN: &[u8] = THINK_START.as_bytes();
const THINK_CLOSE: &[u8] = THINK_END.as_bytes();

// `Full` is the large variant (on wasm32 the gap passes clippy's bound): the phase is copied for
// every candidate byte the mask tries, so boxing it would allocate in the decode loop.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before anything: `<think>` or `<tool_call>`.
    Start,
    /// `<think>` matched this far (`<` is shared with `<tool_call>`).
    ThinkOpen(u8),
    /// Inside the reasoning; `</think>` matched this far, and how far a marker the reasoning
    /// may not hold ([`markers::IN_REASONING`]).
    Think(u8, Watch),
    Literal(Literal, u8),
    /// After `[`: `]` or a call.
    ListStart,
    /// After a call: `,` or `]`.
    ListNext,
    /// After `,` between calls: `{`.
    CallOpen,
    Name(Cursor),
    /// After the arguments' `{`: a key or `}`.
    ArgumentsStart,
    /// After an argument's value: `,` or `}`.
    ArgumentsNext,
    /// After `,` between arguments: a key.
    KeyOpen,
    Key(Cursor),
    EnumValue(Option<Cursor>),
    Value(JsonValue),
    /// The arguments, held to the tool's whole schema.
    Full(FullValue),
    /// `</tool_call>` written: only a stop token may follow.
    Done,
}

/// The position in the turn. `Copy`, so checking a token is: copy, feed its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matcher {
    phase: Phase,
    /// The tool whose call is being written.
    tool: u32,
    /// The argument whose value is being written.
    key: u32,
    /// Argument keys written in this call (bit per key).
    used: u64,
    /// Whitespace bytes in a row.
    whitespace: u8,
}

impl Default for Matcher {
    fn default() -> Self {
        Matcher { phase: Phase::Start, tool: 0, key: 0, used: 0, whitespace: 0 }
    }
}

impl Matcher {
    /// Whether the turn may end here.
    pub fn can_stop(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// The bytes the format fixes next, tried first when closing ([`super::closing`]): the
    /// rest of a literal, of `</think>`, or of `<tool_call>` (before `<think>`), or what the
    /// arguments' schema heads for ([`FullValue::hint`]).
    pub fn closing_hints(&self, g: &Grammar) -> [Option<u8>; 2] {
        match self.phase {
            Phase::Start => [Some(b'<'), None],
            Phase::ThinkOpen(at) => [
                Literal::ToolCallOpen.bytes().get(at as usize).copied(),
                THINK_OPEN.get(at as usize).copied(),
            ],
            Phase::Think(at, _) => [THINK_CLOSE.get(at as usize).copied(), Some(THINK_CLOSE[0])],
            Phase::Literal(literal, at) => [literal.bytes().get(at as usize).copied(), None],
            Phase::Full(value) => [g.full.as_ref().and_then(|full| value.hint(full)), None],
            _ => [None, None],
        }
    }

    /// Whether the bytes being matched are one argument's value (an open tool's whole
    /// arguments object is not one).
    pub fn in_argument_value(&self, g: &Grammar) -> bool {
        match self.phase {
            Phase::EnumValue(_) => true,
            Phase::Value(_) => !g.tools[self.tool as usize].open,
            _ => false,
        }
    }

    /// Feeds bytes; false (leaving the matcher in an unspecified state) when one is refused.
    pub fn feed(&mut self, g: &Grammar, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.advance(g, b))
    }

    pub fn advance(&mut self, g: &Grammar, b: u8) -> bool {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        if ws {
            self.whitespace += 1;
            if self.whitespace > MAX_WHITESPACE && !matches!(self.phase, Phase::Think(..)) {
                return false;
            }
        } else {
            self.whitespace = 0;
        }
        match self.phase {
            // Without tools the refusal is the only answer there is, and it is written at once:
            // a model given no tool list wandered in whitespace and endless reasoning until
            // `max_tokens` (an OpenAI chat with no tools answered "\t" after 256 tokens).
            Phase::Start if g.tools.is_empty() => {
                b == b'<' && self.go(Phase::Literal(Literal::ToolCallOpen, 1))
            }
            Phase::Start => ws || (b == b'<' && self.go(Phase::ThinkOpen(1))),
            Phase::ThinkOpen(at) => self.think_open(at as usize, b),
            Phase::Think(at, marker) => self.think(at, marker, b),
            Phase::Literal(literal, at) => self.literal(g, literal, at, b, ws),
            Phase::ListStart | Phase::ListNext => self.list(g, b, ws),
            Phase::CallOpen => ws || (b == b'{' && self.go(Phase::Literal(Literal::NameKey, 0))),
            Phase::Name(at) => self.name(g, at, b),
            Phase::ArgumentsStart | Phase::ArgumentsNext => self.arguments(g, b, ws),
            Phase::KeyOpen => ws || (b == b'"' && self.start_key(g)),
            Phase::Key(at) => self.key(g, at, b),
            Phase::EnumValue(at) => self.enum_value(g, at, b, ws),
            Phase::Value(value) => self.value(g, value, b),
            Phase::Full(value) => self.full(g, value, b),
            Phase::Done => false,
        }
    }

    /// `<think>` matched up to `at`.
    fn think_open(&mut self, at: usize, b: u8) -> bool {
        if THINK_OPEN[at] == b {
            return self.go(if at + 1 == THINK_OPEN.len() {
                Phase::Think(0, Watch::default())
            } else {
                Phase::ThinkOpen(at as u8 + 1)
            });
        }
        // Not `<think>` after all: the same bytes may still spell `<tool_call>`.
        let tool_call = Literal::ToolCallOpen.bytes();
        if tool_call[..at] == THINK_OPEN[..at] && tool_call[at] == b {
            return self.go(Phase::Literal(Literal::ToolCallOpen, at as u8 + 1));
        }
        false
    }

    /// Inside the reasoning, `</think>` matched up to `at`.
    fn think(&mut self, at: u8, mut marker: Watch, b: u8) -> bool {
        if !marker.step(markers::IN_REASONING, b) {
            return false;
        }
        let at = if THINK_CLOSE[at as usize] == b { at + 1 } else { (b == THINK_CLOSE[0]) as u8 };
        if at as usize == THINK_CLOSE.len() {
            return self.go(Phase::Literal(Literal::ToolCallOpen, 0));
        }
        self.go(Phase::Think(at, marker))
    }

    /// `literal` matched up to `at` (whitespace may come before it).
    fn literal(&mut self, g: &Grammar, literal: Literal, at: u8, b: u8, ws: bool) -> bool {
        if at == 0 && ws {
            return true;
        }
        let text = literal.bytes();
        if text[at as usize] != b {
            return false;
        }
        if at as usize + 1 < text.len() {
            return self.go(Phase::Literal(literal, at + 1));
        }
        self.after(g, literal)
    }

    /// In the call list: after `[` (a call, or `]` where no call is required) or after a call.
    fn list(&mut self, g: &Grammar, b: u8, ws: bool) -> bool {
        match b {
            _ if ws => true,
            b']' if matches!(self.phase, Phase::ListNext) || !g.require_call => {
                self.go(Phase::Literal(Literal::ToolCallClose, 0))
            }
            b'{' if matches!(self.phase, Phase::ListStart) && !g.tools.is_empty() => {
                self.go(Phase::Literal(Literal::NameKey, 0))
            }
            b',' if matches!(self.phase, Phase::ListNext) => self.go(Phase::CallOpen),
            _ => false,
        }
    }

    /// A tool's name, matched up to `at`.
    fn name(&mut self, g: &Grammar, at: Cursor, b: u8) -> bool {
        let Some(at) = g.names.advance(at, b) else { return false };
        match g.names.complete(at) {
            Some(tool) => {
                self.tool = tool;
                self.used = 0;
                self.go(Phase::Literal(Literal::NameComma, 0))
            }
            None => self.go(Phase::Name(at)),
        }
    }

    /// In the arguments object: after `{` or after an argument's value.
    fn arguments(&mut self, g: &Grammar, b: u8, ws: bool) -> bool {
        match b {
            _ if ws => true,
            b'"' if matches!(self.phase, Phase::ArgumentsStart) && self.unused_keys(g) => {
                self.start_key(g)
            }
            b',' if matches!(self.phase, Phase::ArgumentsNext) && self.unused_keys(g) => {
                self.go(Phase::KeyOpen)
            }
            b'}' if self.required_written(g) => self.go(Phase::Literal(Literal::CallClose, 0)),
            _ => false,
        }
    }

    /// An argument's key, matched up to `at`: one of the tool's, not written yet.
    fn key(&mut self, g: &Grammar, at: Cursor, b: u8) -> bool {
        let keys = &g.tools[self.tool as usize].keys;
        let Some(at) = keys.advance(at, b) else { return false };
        if keys.tags(at).iter().all(|&k| self.used & (1 << k) != 0) {
            return false;
        }
        match keys.complete(at) {
            Some(key) => {
                self.key = key;
                self.used |= 1 << key;
                self.go(Phase::Literal(Literal::KeyColon, 0))
            }
            None => self.go(Phase::Key(at)),
        }
    }

    /// An enum argument's value: before its `"` (`None`), or matched up to `at`.
    fn enum_value(&mut self, g: &Grammar, at: Option<Cursor>, b: u8, ws: bool) -> bool {
        let Some(values) = self.enum_values(g) else { return false };
        let at = match at {
            None if ws => return true,
            None if b == b'"' => return self.go(Phase::EnumValue(Some(values.start()))),
            None => return false,
            Some(at) => at,
        };
        let Some(at) = values.advance(at, b) else { return false };
        if values.complete(at).is_some() {
            return self.go(Phase::ArgumentsNext);
        }
        self.go(Phase::EnumValue(Some(at)))
    }

    /// An argument's value (or an open tool's arguments) of a JSON type.
    fn value(&mut self, g: &Grammar, mut value: JsonValue, b: u8) -> bool {
        match value.step(b, g.source.as_ref()) {
            ValueStep::Consumed => self.go(Phase::Value(value)),
            ValueStep::Rejected => false,
            ValueStep::Done => self.go(self.after_value(g)),
            ValueStep::DoneReprocess => {
                self.phase = self.after_value(g);
                self.whitespace = 0;
                self.advance(g, b)
            }
        }
    }

    /// The arguments held to the tool's whole schema.
    fn full(&mut self, g: &Grammar, mut value: FullValue, b: u8) -> bool {
        match g.full.as_ref().map(|full| value.step(full, b)) {
            Some(ValueStep::Consumed) => self.go(Phase::Full(value)),
            Some(ValueStep::Done) => self.go(Phase::Literal(Literal::CallClose, 0)),
            Some(ValueStep::DoneReprocess) => {
                self.phase = Phase::Literal(Literal::CallClose, 0);
                self.whitespace = 0;
                self.advance(g, b)
            }
            Some(ValueStep::Rejected) | None => false,
        }
    }

    fn go(&mut self, phase: Phase) -> bool {
        self.phase = phase;
        true
    }

    /// Where a completed literal leads.
    fn after(&mut self, g: &Grammar, literal: Literal) -> bool {
        let tool = g.tools.get(self.tool as usize);
        let next = match literal {
            Literal::ToolCallOpen => Phase::Literal(Literal::ListOpen, 0),
            Literal::ListOpen => Phase::ListStart,
            Literal::NameKey => Phase::Literal(Literal::NameColon, 0),
            Literal::NameColon => Phase::Literal(Literal::NameQuote, 0),
            Literal::NameQuote => Phase::Name(g.names.start()),
            Literal::NameComma => Phase::Literal(Literal::ArgumentsKey, 0),
            Literal::ArgumentsKey => Phase::Literal(Literal::ArgumentsColon, 0),
            Literal::ArgumentsColon => match tool {
                _ if g.full.is_some() => {
                    let root = g.full.as_ref().and_then(|f| f.roots.get(self.tool as usize));
                    match root {
                        Some(&root) => Phase::Full(FullValue::new(root)),
                        None => return false,
                    }
                }
                Some(t) if t.open => {
                    Phase::Value(JsonValue::new(Some(JsonType::Object), Length::ANY))
                }
                _ => Phase::Literal(Literal::ArgumentsOpen, 0),
            },
            Literal::ArgumentsOpen => Phase::ArgumentsStart,
            Literal::KeyColon => {
                let Some(kind) = tool.and_then(|t| t.kinds.get(self.key as usize)) else {
                    return false;
                };
                match kind {
                    ValueKind::Json(json_type, length) => {
                        let value = JsonValue::new(*json_type, *length);
                        // A request too short for the string's minLength, or with nothing to
                        // copy, cannot be copied from.
                        match &g.source {
                            Some(source)
                                if *json_type == Some(JsonType::String)
                                    && source.chars() >= length.min
                                    && source.copyable() =>
                            {
                                Phase::Value(value.extractive())
                            }
                            _ => Phase::Value(value),
                        }
                    }
                    ValueKind::Enum(_) => Phase::EnumValue(None),
                }
            }
            Literal::CallClose => Phase::ListNext,
            Literal::ToolCallClose => Phase::Done,
        };
        self.go(next)
    }

    fn after_value(&self, g: &Grammar) -> Phase {
        if g.tools[self.tool as usize].open {
            Phase::Literal(Literal::CallClose, 0)
        } else {
            Phase::ArgumentsNext
        }
    }

    fn start_key(&mut self, g: &Grammar) -> bool {
        self.go(Phase::Key(g.tools[self.tool as usize].keys.start()))
    }

    fn unused_keys(&self, g: &Grammar) -> bool {
        let keys = &g.tools[self.tool as usize].keys;
        keys.tags(keys.start()).iter().any(|&k| self.used & (1 << k) == 0)
    }

    fn required_written(&self, g: &Grammar) -> bool {
        let required = g.tools[self.tool as usize].required;
        required & self.used == required
    }

    fn enum_values<'g>(&self, g: &'g Grammar) -> Option<&'g LiteralSet> {
        match g.tools[self.tool as usize].kinds.get(self.key as usize) {
            Some(ValueKind::Enum(values)) => Some(values),
            _ => None,
        }
    }
}
