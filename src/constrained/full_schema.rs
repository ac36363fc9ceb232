//! Each tool's whole JSON schema compiled for full-schema decoding (structured output): nested
//! objects and arrays, `required`, `enum`/`const`, numbers within `minimum`/`maximum` (and
//! `multipleOf` for integers), string `minLength`/`maxLength`, `pattern` and `format` (both, when
//! both are given: [`super::dfa`]), item counts and `uniqueItems` over enum items, nullable
//! types, `anyOf`/`oneOf` whose alternatives start differently or are objects told apart by a
//! `const`/`enum` key, and `$ref` into the schema (not recursive). A keyword the matcher cannot
//! hold, or a schema no value meets, is refused ([`Error::Schema`], with its path) rather than
//! ignored or left to fail while generating, so what is generated always validates. Objects
//! with declared properties get those keys only (as OpenAI's strict mode does).
use alloc::string::String;
use alloc::vec::Vec;

use super::bounded_number::Bounds;
use super::dfa::StringDfa;
use super::literals::LiteralSet;
use super::markers;
use super::pattern::Pattern;
use super::schema::{quoted, JsonType, Length};
use super::{formats, unions};
use crate::json::Value;
use crate::{Error, Result};

/// Objects and arrays nested inside one value, at most.
pub const MAX_NESTING: usize = 8;
/// Properties an object may declare (a bit each), and enum items a unique array may hold.
const MAX_PROPERTIES: usize = 64;
/// Nodes one tool list may compile to (`$ref`s can repeat a schema).
const MAX_NODES: usize = 4096;
/// Automaton states its patterned strings may have in all (each costs its construction).
const MAX_STATES: usize = 8192;

#[derive(Debug, Clone)]
pub enum Node {
    /// Any JSON value of this type (`None`: any), a string within `Length`.
    Free(Option<JsonType>, Length),
    /// One of these compact JSON texts (`enum`, `const`, `null`); the tag numbers each.
    Literals(LiteralSet),
    /// Keys are quoted-key bytes after the opening quote; the tag indexes `children`.
    Object {
        keys: LiteralSet,
        children: Vec<u32>,
        required: u64,
    },
    /// `unique`: no item (enum text) twice; `max` is then at most the items there are.
    Array {
        items: u32,
        min: u32,
        max: u32,
        unique: bool,
    },
    Number(Bounds),
    Pattern(StringDfa, Length),
    /// Alternatives with the bytes each may start with (no byte shared).
    Union(Vec<(u128, u32)>),
    /// Objects told apart by one key's value, which is written first: `head` is `{"key":`,
    /// the value's tag indexes `alts` (the object and the key's index in it).
    Tagged {
        head: Vec<u8>,
        values: LiteralSet,
        alts: Vec<(u32, u32)>,
    },
}

/// The compiled schemas of a tool list: one root per tool, in the list's order.
#[derive(Debug, Clone)]
pub struct FullSchemas {
    pub nodes: Vec<Node>,
    pub roots: Vec<u32>,
    /// Automaton states of the patterned strings so far.
    states: usize,
}

pub(super) fn unsupported(what: &'static str) -> Error {
    Error::Unsupported { what }
}

impl FullSchemas {
    /// Compiles each tool's `parameters` (a tool without them takes any object).
    pub fn new(tools: &Value) -> Result<FullSchemas> {
        let mut out = FullSchemas { nodes: Vec::new(), roots: Vec::new(), states: 0 };
        let entries = match tools {
            Value::Array(entries) => entries.as_slice(),
            _ => &[],
        };
        for tool in entries {
            let root = match tool.get("parameters") {
                Some(schema) => {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
                    let mut c = Compiler {
                        out: &mut out,
                        root: schema,
                        path: String::from(name) + "#",
                        expanding: Vec::new(),
                        compiled: Vec::new(),
                    };
                    c.node(schema, 0)?
                }
                None => out.push(Node::Free(Some(JsonType::Object), Length::ANY)),
            };
            out.roots.push(root);
        }
        Ok(out)
    }

    pub(super) fn push(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        self.nodes.len() as u32 - 1
    }
}

/// One tool's schema being compiled.
struct Compiler<'a, 's> {
    out: &'s mut FullSchemas,
    /// What `#` stands for in a `$ref`.
    root: &'a Value,
    /// Where the schema being compiled sits (tool name, then a JSON Pointer).
    path: String,
    /// `$ref`s being expanded (one met again is recursion), and those done, by nesting depth.
    expanding: Vec<&'a str>,
    compiled: Vec<(&'a str, usize, u32)>,
}

impl<'a> Compiler<'a, '_> {
    /// The error `e` says, at the path being compiled.
    fn at(&self, e: Error, malformed: bool) -> Error {
        match e {
            Error::Unsupported { what } => {
                Error::Schema { what, path: self.path.clone(), malformed }
            }
            e => e,
        }
    }

    fn malformed(&self, what: &'static str) -> Error {
        self.at(unsupported(what), true)
    }

    /// Compiles `schema` found at `step` (and `index`, if any) below the current path.
    fn child(
        &mut self,
        step: &str,
        index: Option<usize>,
        schema: &'a Value,
        depth: usize,
    ) -> Result<u32> {
        let len = self.path.len();
        self.path.push('/');
        self.path.push_str(step);
        if let Some(mut i) = index {
            self.path.push('/');
            let at = self.path.len();
            loop {
                self.path.insert(at, (b'0' + (i % 10) as u8) as char);
                i /= 10;
                if i == 0 {
                    break;
                }
            }
        }
        let id = self.node(schema, depth)?;
        self.path.truncate(len);
        Ok(id)
    }

    fn node(&mut self, schema: &'a Value, depth: usize) -> Result<u32> {
        let node = self.node_here(schema, depth);
        node.map_err(|e| self.at(e, false))
    }

    fn node_here(&mut self, schema: &'a Value, depth: usize) -> Result<u32> {
        let Value::Object(members) = schema else {
            return match schema {
                Value::Bool(true) => Ok(self.out.push(Node::Free(None, Length::ANY))),
                _ => Err(unsupported("schemas that are not objects (false, numbers)")),
            };
        };
        for (key, _) in members {
            check_keyword(key)?;
        }
        if self.out.nodes.len() >= MAX_NODES {
            return Err(unsupported("schemas of more than 4096 parts"));
        }
        for key in ["$ref", "anyOf", "oneOf"] {
            let Some(value) = schema.get(key) else { continue };
            if members.iter().any(|(k, _)| k != key && !ANNOTATIONS.contains(&k.as_str())) {
                return Err(unsupported("keywords beside $ref, anyOf or oneOf"));
            }
            return match value {
                Value::String(target) => self.reference(target, depth),
                Value::Array(alts) if key != "$ref" && !alts.is_empty() => {
                    let mut ids = Vec::new();
                    for (i, alt) in alts.iter().enumerate() {
                        ids.push(self.child(key, Some(i), alt, depth)?);
                    }
                    unions::union(self.out, ids)
                }
                _ => Err(self.malformed("a $ref that is not a string, or an empty anyOf/oneOf")),
            };
        }
        if let Some(values) = schema.get("enum") {
            let Value::Array(values) = values else {
                return Err(self.malformed("an enum that is not an array"));
            };
            return self.literals(values);
        }
        if let Some(value) = schema.get("const") {
            return self.literals(core::slice::from_ref(value));
        }
        let implied = if schema.get("properties").is_some() {
            Some("object")
        } else if schema.get("items").is_some() {
            Some("array")
        } else {
            None
        };
        match schema.get("type") {
            None => self.typed(schema, implied, depth),
            Some(Value::String(name)) => self.typed(schema, Some(name), depth),
            Some(Value::Array(names)) if !names.is_empty() => {
                let numbers = names.iter().any(|n| n.as_str() == Some("number"));
                let mut ids = Vec::new();
                for name in names {
                    let Some(name) = name.as_str() else {
                        return Err(self.malformed("a type list that is not of names"));
                    };
                    // `number` already takes the integers.
                    if !(numbers && name == "integer") {
                        ids.push(self.typed(schema, Some(name), depth)?);
                    }
                }
                unions::union(self.out, ids)
            }
            Some(_) => Err(self.malformed("a type that is not a name or a list of names")),
        }
    }

    /// `schema` read as a value of one JSON type (`None`: any).
    fn typed(&mut self, schema: &'a Value, json_type: Option<&str>, depth: usize) -> Result<u32> {
        let nested = |depth: usize| {
            if depth >= MAX_NESTING {
                Err(unsupported("schemas nested deeper than 8"))
            } else {
                Ok(())
            }
        };
        Ok(match json_type {
            None => self.out.push(Node::Free(None, Length::ANY)),
            Some("null") => self.literal_texts(alloc::vec![b"null".to_vec()])?,
            Some("boolean") => self.out.push(Node::Free(Some(JsonType::Boolean), Length::ANY)),
            Some("string") => self.string(schema)?,
            Some(name @ ("integer" | "number")) => self.number(schema, name == "integer")?,
            Some("object") => {
                nested(depth)?;
                self.object(schema, depth)?
            }
            Some("array") => {
                nested(depth)?;
                self.array(schema, depth)?
            }
            Some(_) => {
                return Err(unsupported(
                    "a type other than string, integer, number, boolean, null, array, object",
                ))
            }
        })
    }

    fn reference(&mut self, target: &'a str, depth: usize) -> Result<u32> {
        if let Some(&(_, _, id)) =
            self.compiled.iter().find(|(t, d, _)| *t == target && *d == depth)
        {
            return Ok(id);
        }
        if self.expanding.contains(&target) {
            return Err(unsupported("a recursive $ref (a schema that holds itself)"));
        }
        let schema = resolve(self.root, target)
            .ok_or(unsupported("a $ref other than a JSON Pointer into this schema (#/...)"))?;
        self.expanding.push(target);
        let id = self.node(schema, depth)?;
        self.expanding.pop();
        self.compiled.push((target, depth, id));
        Ok(id)
    }

    fn literals(&mut self, values: &[Value]) -> Result<u32> {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for value in values {
            if matches!(value, Value::Array(_) | Value::Object(_)) {
                return Err(unsupported("enum or const values that are arrays or objects"));
            }
            let text = value.to_json().into_bytes();
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        self.literal_texts(texts)
    }

    fn literal_texts(&mut self, texts: Vec<Vec<u8>>) -> Result<u32> {
        if texts.is_empty() {
            return Err(unsupported("an empty enum (no value fits)"));
        }
        if texts.iter().any(|t| markers::in_string(t)) {
            return Err(unsupported(
                "enum or const strings that spell </tool_call>, <|im_end|> or <think>",
            ));
        }
        let set = unions::literal_set(texts.into_iter().enumerate().map(|(i, t)| (t, i as u32)))?;
        Ok(self.out.push(Node::Literals(set)))
    }

    fn length(&self, schema: &Value) -> Result<Length> {
        let bound = |key, default| match schema.get(key) {
            None => Ok(default),
            Some(Value::Int(d)) if !d.starts_with('-') => Ok(d.parse::<u32>().unwrap_or(u32::MAX)),
            Some(&Value::Float(x)) if x >= 0.0 && x == libm::floor(x) => {
                Ok(x.min(u32::MAX as f64) as u32)
            }
            Some(_) => {
                Err(self.malformed("minLength/maxLength that are not non-negative integers"))
            }
        };
        let length = Length { min: bound("minLength", 0)?, max: bound("maxLength", u32::MAX)? };
        if length.min > length.max {
            return Err(unsupported("minLength above maxLength (no string fits)"));
        }
        Ok(length)
    }

    fn string(&mut self, schema: &Value) -> Result<u32> {
        let length = self.length(schema)?;
        let pattern = match schema.get("pattern") {
            Some(Value::String(p)) => Some(Pattern::compile(p)?),
            Some(_) => return Err(self.malformed("a pattern that is not a string")),
            None => None,
        };
        let format = match schema.get("format") {
            Some(Value::String(format)) => Some(formats::pattern(format)?),
            Some(_) => return Err(self.malformed("a format that is not a string")),
            None => None,
        };
        let (Some(first), also) = (pattern.as_ref().or(format.as_ref()), format.as_ref()) else {
            return Ok(self.out.push(Node::Free(Some(JsonType::String), length)));
        };
        let also = also.filter(|_| pattern.is_some());
        if self.out.states >= MAX_STATES {
            return Err(unsupported(
                "patterns and formats of more than 8192 automaton states in all",
            ));
        }
        let dfa = StringDfa::new(first, also)?;
        self.out.states += dfa.states();
        if !dfa.fits(StringDfa::START, 0, length) {
            return Err(unsupported(
                "a pattern or format no string within minLength/maxLength meets",
            ));
        }
        Ok(self.out.push(Node::Pattern(dfa, length)))
    }

    fn number(&mut self, schema: &Value, integer: bool) -> Result<u32> {
        let bound = |key| match schema.get(key) {
            None => Ok(None),
            Some(Value::Int(d)) => Ok(crate::float_parse::parse(d)),
            Some(&Value::Float(x)) if !x.is_nan() => Ok(Some(x)),
            Some(_) => Err(self.malformed("numeric bounds that are not numbers")),
        };
        let (min, max) = (bound("minimum")?, bound("maximum")?);
        let (xmin, xmax) = (bound("exclusiveMinimum")?, bound("exclusiveMaximum")?);
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
        // A whole multipleOf makes the number an integer; a fractional one is not held.
        let multiple = match schema.get("multipleOf") {
            None => 1,
            Some(Value::Int(d)) if !d.starts_with('-') && d != "0" => {
                d.parse::<u64>().ok().filter(|&m| m < 1_000_000_000_000_000).unwrap_or(u64::MAX)
            }
            Some(&Value::Float(x)) if x > 0.0 && x == libm::floor(x) => {
                (x as u64).min(u64::MAX - 1)
            }
            Some(Value::Float(x)) if *x > 0.0 => {
                return Err(unsupported("a multipleOf that is not a whole number"))
            }
            Some(_) => return Err(self.malformed("a multipleOf that is not a positive number")),
        };
        let integer = integer || multiple > 1;
        let bounds = Bounds { lo, lo_exclusive, hi, hi_exclusive, integer, multiple };
        if !bounds.satisfiable() {
            return Err(unsupported("numeric bounds no number of at most 15 digits meets"));
        }
        Ok(self.out.push(Node::Number(bounds)))
    }

    fn object(&mut self, schema: &'a Value, depth: usize) -> Result<u32> {
        let Some(properties) = schema.get("properties") else {
            return Ok(match schema.get("additionalProperties") {
                None | Some(Value::Bool(true)) => {
                    self.out.push(Node::Free(Some(JsonType::Object), Length::ANY))
                }
                Some(Value::Bool(false)) => self.out.push(Node::Object {
                    keys: LiteralSet::default(),
                    children: Vec::new(),
                    required: 0,
                }),
                Some(_) => return Err(unsupported("additionalProperties schemas")),
            });
        };
        let Value::Object(properties) = properties else {
            return Err(self.malformed("properties that are not an object"));
        };
        if properties.len() > MAX_PROPERTIES {
            return Err(unsupported("objects with more than 64 properties"));
        }
        let mut keys = Vec::new();
        let mut children = Vec::new();
        for (i, (key, child)) in properties.iter().enumerate() {
            if markers::in_string(key.as_bytes()) {
                return Err(unsupported(
                    "property names that spell </tool_call>, <|im_end|> or <think>",
                ));
            }
            keys.push((quoted(key), i as u32));
            let step = String::from("properties/") + key;
            children.push(self.child(&step, None, child, depth + 1)?);
        }
        let mut required = 0u64;
        if let Some(names) = schema.get("required") {
            let Value::Array(names) = names else {
                return Err(self.malformed("required that is not an array"));
            };
            for name in names {
                let i = properties.iter().position(|(key, _)| Some(key.as_str()) == name.as_str());
                let Some(i) = i else {
                    return Err(unsupported("required keys that are not declared properties"));
                };
                required |= 1 << i;
            }
        }
        Ok(self.out.push(Node::Object { keys: LiteralSet::new(keys), children, required }))
    }

    fn array(&mut self, schema: &'a Value, depth: usize) -> Result<u32> {
        let items = match schema.get("items") {
            Some(items) => self.child("items", None, items, depth + 1)?,
            None => self.out.push(Node::Free(None, Length::ANY)),
        };
        let count = |key, default| match schema.get(key) {
            Some(Value::Int(d)) if !d.starts_with('-') => Ok(d.parse::<u32>().unwrap_or(u32::MAX)),
            None => Ok(default),
            Some(_) => Err(self.malformed("minItems/maxItems that are not non-negative integers")),
        };
        let (min, mut max) = (count("minItems", 0)?, count("maxItems", u32::MAX)?);
        let unique = match schema.get("uniqueItems") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => {
                let Node::Literals(set) = &self.out.nodes[items as usize] else {
                    return Err(unsupported(
                        "uniqueItems over items that are not enum/const values",
                    ));
                };
                let distinct = set.entries().count();
                if distinct > MAX_PROPERTIES {
                    return Err(unsupported("uniqueItems over more than 64 enum values"));
                }
                max = max.min(distinct as u32);
                true
            }
            Some(_) => return Err(self.malformed("a uniqueItems that is not a boolean")),
        };
        if min > max {
            return Err(unsupported(
                "minItems above maxItems (or the distinct items) (no array fits)",
            ));
        }
        Ok(self.out.push(Node::Array { items, min, max, unique }))
    }
}

/// The schema at a `$ref` of the form `#` or `#/a/b` (a JSON Pointer into `root`).
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let pointer = target.strip_prefix('#')?;
    if pointer.contains(['~', '%']) {
        return None;
    }
    pointer.split('/').skip(1).try_fold(root, |at, step| match at {
        Value::Array(items) => items.get(step.parse::<usize>().ok()?),
        _ => at.get(step),
    })
}

/// Keywords that only annotate (allowed beside `$ref`, `anyOf` and `oneOf`).
const ANNOTATIONS: &[&str] = &[
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
    "$defs",
    "definitions",
];

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
        "uniqueItems",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "anyOf",
        "oneOf",
        "$ref",
    ];
    if HELD.contains(&key) || ANNOTATIONS.contains(&key) {
        return Ok(());
    }
    Err(unsupported(match key {
        "allOf" | "not" => "the schema combinators allOf and not",
        "if" | "then" | "else" => "conditional schemas (if/then/else)",
        "prefixItems" | "contains" | "minContains" | "maxContains" => {
            "tuple and contains array keywords"
        }
        "patternProperties" | "propertyNames" | "minProperties" | "maxProperties" => {
            "property-count and property-name keywords"
        }
        _ => "a schema keyword the matcher does not know",
    }))
}
