//! Each tool's whole JSON schema compiled for full-schema decoding (structured output): nested
//! objects and arrays, `required`, `enum`/`const`, numbers within `minimum`/`maximum`, string
//! `minLength`/`maxLength`, `pattern` (and the `format`s that are patterns), item counts.
//! A keyword the matcher cannot hold (`anyOf`, `$ref`, `multipleOf`, ...) is refused with
//! [`Error::Unsupported`] rather than ignored, so what is generated always validates.
//! Objects with declared properties get those keys only (as OpenAI's strict mode does).
use alloc::vec::Vec;

use super::bounded_number::Bounds;
use super::literals::LiteralSet;
use super::pattern::Pattern;
use super::schema::{quoted, JsonType, Length};
use crate::json::Value;
use crate::{Error, Result};

/// Objects and arrays nested inside one value, at most.
pub const MAX_NESTING: usize = 8;
/// Properties an object may declare (a bit each).
const MAX_PROPERTIES: usize = 64;

#[derive(Debug, Clone)]
pub enum Node {
    /// Any JSON value of this type (`None`: any), a string within `Length`.
    Free(Option<JsonType>, Length),
    /// One of these compact JSON texts (`enum`, `const`, `null`).
    Literals(LiteralSet),
    /// Keys are quoted-key bytes after the opening quote; the tag indexes `children`.
    Object {
        keys: LiteralSet,
        children: Vec<u32>,
        required: u64,
    },
    Array {
        items: u32,
        min: u32,
        max: u32,
    },
    Number(Bounds),
    Pattern(Pattern, Length),
}

/// The compiled schemas of a tool list: one root per tool, in the list's order.
#[derive(Debug, Clone)]
pub struct FullSchemas {
    pub nodes: Vec<Node>,
    pub roots: Vec<u32>,
}

fn unsupported(what: &'static str) -> Error {
    Error::Unsupported { what }
}

impl FullSchemas {
    /// Compiles each tool's `parameters` (a tool without them takes any object).
    pub fn new(tools: &Value) -> Result<FullSchemas> {
        let mut out = FullSchemas { nodes: Vec::new(), roots: Vec::new() };
        let entries = match tools {
            Value::Array(entries) => entries.as_slice(),
            _ => &[],
        };
        for tool in entries {
            let root = match tool.get("parameters") {
                Some(schema) => out.node(schema, 0)?,
                None => out.push(Node::Free(Some(JsonType::Object), Length::ANY)),
            };
            out.roots.push(root);
        }
        Ok(out)
    }

    fn push(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        self.nodes.len() as u32 - 1
    }

    fn node(&mut self, schema: &Value, depth: usize) -> Result<u32> {
        let Value::Object(members) = schema else {
            return match schema {
                Value::Bool(true) => Ok(self.push(Node::Free(None, Length::ANY))),
                _ => Err(unsupported("schemas that are not objects (false, numbers)")),
            };
        };
        for (key, _) in members {
            check_keyword(key)?;
        }
        if let Some(values) = schema.get("enum") {
            let Value::Array(values) = values else {
                return Err(unsupported("an enum that is not an array"));
            };
            return self.literals(values);
        }
        if let Some(value) = schema.get("const") {
            return self.literals(core::slice::from_ref(value));
        }
        let json_type = match schema.get("type") {
            None => None,
            Some(Value::String(name)) => Some(name.as_str()),
            Some(Value::Array(names)) if names.len() == 1 => names[0].as_str(),
            Some(_) => return Err(unsupported("type lists (unions of types)")),
        };
        let json_type = json_type.or(if schema.get("properties").is_some() {
            Some("object")
        } else if schema.get("items").is_some() {
            Some("array")
        } else {
            None
        });
        let nested = |depth: usize| {
            if depth >= MAX_NESTING {
                Err(unsupported("schemas nested deeper than 8"))
            } else {
                Ok(())
            }
        };
        Ok(match json_type {
            None => self.push(Node::Free(None, Length::ANY)),
            Some("null") => {
                self.push(Node::Literals(LiteralSet::new(alloc::vec![(b"null".to_vec(), 0)])))
            }
            Some("boolean") => self.push(Node::Free(Some(JsonType::Boolean), Length::ANY)),
            Some("string") => self.string(schema)?,
            Some(name @ ("integer" | "number")) => self.number(schema, name == "integer")?,
            Some("object") => {
                nested(depth)?;
                self.object(schema, depth)?
            }
            Some("array") => {
                nested(depth)?;
                let items = match schema.get("items") {
                    Some(items) => self.node(items, depth + 1)?,
                    None => self.push(Node::Free(None, Length::ANY)),
                };
                let count = |key, default| match schema.get(key) {
                    Some(Value::Int(d)) if !d.starts_with('-') => {
                        Ok(d.parse::<u32>().unwrap_or(u32::MAX))
                    }
                    None => Ok(default),
                    Some(_) => {
                        Err(unsupported("minItems/maxItems that are not non-negative integers"))
                    }
                };
                let (min, max) = (count("minItems", 0)?, count("maxItems", u32::MAX)?);
                if min > max {
                    return Err(unsupported("minItems above maxItems (no array fits)"));
                }
                self.push(Node::Array { items, min, max })
            }
            Some(_) => {
                return Err(unsupported(
                    "a type other than string, integer, number, boolean, null, array, object",
                ))
            }
        })
    }

    fn literals(&mut self, values: &[Value]) -> Result<u32> {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for value in values {
            if matches!(value, Value::Array(_) | Value::Object(_)) {
                return Err(unsupported("enum or const values that are arrays or objects"));
            }
            texts.push(value.to_json().into_bytes());
        }
        if texts.is_empty() {
            return Err(unsupported("an empty enum (no value fits)"));
        }
        // A number that prefixes another (1 and 12) could not tell where it ends.
        if texts.iter().any(|a| texts.iter().any(|b| b.len() > a.len() && b.starts_with(a))) {
            return Err(unsupported("enum numbers where one is a prefix of another"));
        }
        Ok(self.push(Node::Literals(LiteralSet::new(texts.into_iter().map(|t| (t, 0)).collect()))))
    }

    fn string(&mut self, schema: &Value) -> Result<u32> {
        let length = Length::of(schema);
        let pattern = match (schema.get("pattern"), schema.get("format")) {
            (Some(Value::String(p)), _) => Some(p.as_str()),
            (Some(_), _) => return Err(unsupported("a pattern that is not a string")),
            (None, Some(Value::String(format))) => Some(format_pattern(format)?),
            (None, Some(_)) => return Err(unsupported("a format that is not a string")),
            (None, None) => None,
        };
        Ok(match pattern {
            Some(p) => {
                let pattern = Pattern::compile(p)?;
                if pattern.to_end(pattern.start()) > length.max {
                    return Err(unsupported("a pattern longer than the string's maxLength"));
                }
                self.push(Node::Pattern(pattern, length))
            }
            None => self.push(Node::Free(Some(JsonType::String), length)),
        })
    }

    fn number(&mut self, schema: &Value, integer: bool) -> Result<u32> {
        let bound = |key| match schema.get(key) {
            None => Ok(None),
            Some(Value::Int(d)) => Ok(d.parse::<f64>().ok()),
            Some(&Value::Float(x)) => Ok(Some(x)),
            Some(_) => Err(unsupported("numeric bounds that are not numbers")),
        };
        let (min, max) = (bound("minimum")?, bound("maximum")?);
        let (xmin, xmax) = (bound("exclusiveMinimum")?, bound("exclusiveMaximum")?);
        let json_type = if integer { JsonType::Integer } else { JsonType::Number };
        if min.is_none() && max.is_none() && xmin.is_none() && xmax.is_none() {
            return Ok(self.push(Node::Free(Some(json_type), Length::ANY)));
        }
        // The tighter of each pair.
        let (lo, lo_exclusive) = match (min, xmin) {
            (Some(a), Some(b)) if b >= a => (b, true),
            (Some(a), _) => (a, false),
            (None, Some(b)) => (b, true),
            (None, None) => (f64::NEG_INFINITY, false),
        };
        let (hi, hi_exclusive) = match (max, xmax) {
            (Some(a), Some(b)) if b <= a => (b, true),
            (Some(a), _) => (a, false),
            (None, Some(b)) => (b, true),
            (None, None) => (f64::INFINITY, false),
        };
        let bounds = Bounds { lo, lo_exclusive, hi, hi_exclusive, integer };
        if !bounds.satisfiable() {
            return Err(unsupported("numeric bounds no number (of at most 15 digits) fits"));
        }
        Ok(self.push(Node::Number(bounds)))
    }

    fn object(&mut self, schema: &Value, depth: usize) -> Result<u32> {
        let Some(properties) = schema.get("properties") else {
            return Ok(match schema.get("additionalProperties") {
                None | Some(Value::Bool(true)) => {
                    self.push(Node::Free(Some(JsonType::Object), Length::ANY))
                }
                Some(Value::Bool(false)) => self.push(Node::Object {
                    keys: LiteralSet::default(),
                    children: Vec::new(),
                    required: 0,
                }),
                Some(_) => return Err(unsupported("additionalProperties schemas")),
            });
        };
        let Value::Object(properties) = properties else {
            return Err(unsupported("properties that are not an object"));
        };
        if properties.len() > MAX_PROPERTIES {
            return Err(unsupported("objects with more than 64 properties"));
        }
        let mut keys = Vec::new();
        let mut children = Vec::new();
        for (i, (key, child)) in properties.iter().enumerate() {
            keys.push((quoted(key), i as u32));
            children.push(self.node(child, depth + 1)?);
        }
        let mut required = 0u64;
        if let Some(names) = schema.get("required") {
            let Value::Array(names) = names else {
                return Err(unsupported("required that is not an array"));
            };
            for name in names {
                let i = properties.iter().position(|(key, _)| Some(key.as_str()) == name.as_str());
                let Some(i) = i else {
                    return Err(unsupported("required keys that are not declared properties"));
                };
                required |= 1 << i;
            }
        }
        Ok(self.push(Node::Object { keys: LiteralSet::new(keys), children, required }))
    }
}

/// The pattern a `format` stands for; formats that are not a pattern are refused.
fn format_pattern(format: &str) -> Result<&'static str> {
    Ok(match format {
        "date" => r"^\d{4}-[01]\d-[0-3]\d$",
        "time" => r"^[0-2]\d:[0-5]\d(:[0-5]\d)?$",
        "date-time" => r"^\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d(:[0-5]\d)?(Z|[+-][0-2]\d:[0-5]\d)?$",
        "uuid" => r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        _ => return Err(unsupported("a string format other than date, time, date-time, uuid")),
    })
}

/// Refuses keywords whose meaning the matcher would drop.
fn check_keyword(key: &str) -> Result<()> {
    const HELD: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    ];
    if HELD.contains(&key) {
        return Ok(());
    }
    Err(unsupported(match key {
        "anyOf" | "oneOf" | "allOf" | "not" => "schema combinators (anyOf, oneOf, allOf, not)",
        "$ref" | "$defs" | "definitions" => "schema references ($ref, $defs)",
        "if" | "then" | "else" => "conditional schemas (if/then/else)",
        "multipleOf" => "the multipleOf keyword",
        "uniqueItems" => "the uniqueItems keyword",
        "prefixItems" | "contains" | "minContains" | "maxContains" => {
            "tuple and contains array keywords"
        }
        "patternProperties" | "propertyNames" | "minProperties" | "maxProperties" => {
            "property-count and property-name keywords"
        }
        _ => "a schema keyword the matcher does not know",
    }))
}
