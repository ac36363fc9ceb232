//! The tool list compiled into what constrained decoding checks: tool names, each tool's
//! argument keys, which of them are required, and each argument's value kind (with a string's
//! `minLength`/`maxLength`, so a model repeating a word inside a value is cut off there).
//!
//! Strings are matched in the form the model writes them: compact JSON, raw UTF-8, closing
//! quote included (a quote cannot occur unescaped inside, so no item prefixes another).
use alloc::string::String;
use alloc::vec::Vec;

use super::full_schema::FullSchemas;
use super::literals::LiteralSet;
use super::markers;
use super::span::Source;
use crate::json::{self, Value};
use crate::{Error, Result};

/// Argument keys tracked per call (a bit each); tools with more take any JSON object.
const MAX_KEYS: usize = 64;

#[derive(Debug, Clone)]
pub enum ValueKind {
    /// One of these strings (the schema's `enum`, all strings).
    Enum(LiteralSet),
    /// A JSON value of this type (`None`, no usable type: any JSON value); a string also
    /// within `Length`.
    Json(Option<JsonType>, Length),
}

/// Bounds on a top-level string's length in characters, as JSON Schema counts them: code points
/// (a raw UTF-8 character, an escape, or an escaped surrogate pair counts one); the whole range
/// when the schema sets none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Length {
    pub min: u32,
    pub max: u32,
}

impl Length {
    pub const ANY: Length = Length { min: 0, max: u32::MAX };

    /// `minLength`/`maxLength` of a schema; bounds that are not non-negative integers, or that
    /// no string can meet (min > max), are ignored rather than make the value impossible.
    pub(super) fn of(schema: &Value) -> Length {
        let bound = |key| match schema.get(key) {
            Some(Value::Int(digits)) if !digits.starts_with('-') => {
                Some(digits.parse::<u32>().unwrap_or(u32::MAX))
            }
            Some(&Value::Float(x)) if x >= 0.0 && x == (x as u64) as f64 => {
                Some(u32::try_from(x as u64).unwrap_or(u32::MAX))
            }
            _ => None,
        };
        let length = Length {
            min: bound("minLength").unwrap_or(0),
            max: bound("maxLength").unwrap_or(u32::MAX),
        };
        if length.min > length.max {
            Length::ANY
        } else {
            length
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
}

#[derive(Debug, Clone)]
pub struct Tool {
    /// Declared argument keys; the tag is the index into `kinds`.
    pub keys: LiteralSet,
    pub kinds: Vec<ValueKind>,
    /// Bit `i` set: key `i` must be written before the arguments close.
    pub required: u64,
    /// No declared properties (or too many to track): `arguments` is any JSON object.
    pub open: bool,
}

#[derive(Debug, Clone)]
pub struct Grammar {
    /// Tool names; the tag is the index into `tools`.
    pub names: LiteralSet,
    pub tools: Vec<Tool>,
    /// The request free-text strings are copied from (`None`: strings are free).
    pub source: Option<Source>,
    /// The refusal `[]` is not allowed: at least one call must be written.
    pub require_call: bool,
    /// Arguments held to each tool's whole schema (`None`: to the top-level kinds above).
    pub full: Option<FullSchemas>,
}

impl Grammar {
    /// Compiles a flat tool list (`[{name, parameters: {properties, required}}]`); with a
    /// `source`, string arguments without an `enum` must be copied from it.
    pub fn new(tools: &Value, source: Option<&str>) -> Result<Grammar> {
        let entries = match tools {
            Value::Array(entries) => entries.as_slice(),
            Value::Null => &[],
            _ => return Err(invalid("constrained decoding needs a JSON array of tools")),
        };
        let mut names = Vec::new();
        let mut compiled = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .ok_or(invalid("constrained decoding needs every tool to have a string name"))?;
            if markers::in_string(name.as_bytes()) {
                return Err(Error::Unsupported {
                    what: "tool names that spell </tool_call>, <|im_end|> or <think>",
                });
            }
            names.push((quoted(name), i as u32));
            compiled.push(compile_tool(entry.get("parameters")));
        }
        Ok(Grammar {
            names: LiteralSet::new(names),
            tools: compiled,
            source: source.map(Source::new),
            require_call: false,
            full: None,
        })
    }
}

fn invalid(reason: &'static str) -> Error {
    Error::InvalidArgument { name: "tools", reason }
}

fn compile_tool(parameters: Option<&Value>) -> Tool {
    let open = Tool { keys: LiteralSet::default(), kinds: Vec::new(), required: 0, open: true };
    let Some(Value::Object(properties)) = parameters.and_then(|p| p.get("properties")) else {
        return open;
    };
    if properties.len() > MAX_KEYS {
        return open;
    }
    let keys = properties.iter().enumerate().map(|(i, (key, _))| (quoted(key), i as u32)).collect();
    let kinds = properties.iter().map(|(_, schema)| value_kind(schema)).collect();
    let mut required = 0u64;
    if let Some(Value::Array(names)) = parameters.and_then(|p| p.get("required")) {
        for name in names.iter().filter_map(Value::as_str) {
            if let Some(i) = properties.iter().position(|(key, _)| key == name) {
                required |= 1 << i;
            }
        }
    }
    Tool { keys: LiteralSet::new(keys), kinds, required, open: false }
}

fn value_kind(schema: &Value) -> ValueKind {
    let declared = schema.get("type").and_then(Value::as_str);
    if let Some(Value::Array(options)) = schema.get("enum") {
        let strings: Option<Vec<&str>> = options.iter().map(Value::as_str).collect();
        if let (Some(strings), None | Some("string")) = (strings, declared) {
            if !strings.is_empty() {
                return ValueKind::Enum(LiteralSet::new(
                    strings.iter().map(|s| (quoted(s), 0)).collect(),
                ));
            }
        }
    }
    let json_type = match declared {
        Some("string") => Some(JsonType::String),
        Some("integer") => Some(JsonType::Integer),
        Some("number") => Some(JsonType::Number),
        Some("boolean") => Some(JsonType::Boolean),
        Some("array") => Some(JsonType::Array),
        Some("object") => Some(JsonType::Object),
        _ => None,
    };
    ValueKind::Json(
        json_type,
        if json_type == Some(JsonType::String) { Length::of(schema) } else { Length::ANY },
    )
}

/// The bytes after an opening quote: the compact JSON string body and its closing quote.
pub(super) fn quoted(s: &str) -> Vec<u8> {
    let mut out = String::new();
    json::write_string(s, &mut out);
    out.into_bytes().split_off(1)
}
