//! One JSON value held to its whole compiled schema ([`super::full_schema`]), byte by byte.
//! Open objects and arrays sit on a fixed stack, so the state stays `Copy` (checking a token
//! is: copy, feed its bytes). Every prefix accepted can still be completed to a value the
//! schema accepts: keys are offered only while unused ones remain, `}` only once the required
//! keys are written, `]` and `,` only within the item counts, digits only while the number can
//! still land in its bounds, pattern characters only while the pattern and length can be met.
//! The JSON is compact, as the models write their calls: whitespace only inside strings (and
//! inside values the schema leaves free), so a model cannot idle in a run of spaces.
use super::bounded_number::BoundedNumber;
use super::full_schema::{FullSchemas, Node, MAX_NESTING};
use super::json_value::{JsonValue, Step};
use super::literals::Cursor;
use super::markers::{self, Watch};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `used`: a bit per key written.
    Object {
        node: u32,
        used: u64,
    },
    Array {
        node: u32,
        count: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// A value of this node starts (whitespace first).
    Value(u32),
    Free(JsonValue),
    Literal(u32, Cursor),
    Number(u32, BoundedNumber),
    /// Inside a patterned string: live positions, characters so far, and how far a marker no
    /// string may hold ([`markers::IN_STRINGS`]; a pattern that can only match by spelling one
    /// leaves the value unfinished, as no other pattern does).
    Pattern {
        node: u32,
        state: u64,
        chars: u32,
        marker: Watch,
    },
    ObjectStart,
    /// After an object's `,`: a key.
    KeyOpen,
    Key(Cursor),
    /// After a key: `:`, then the value of child `key`.
    Colon(u32),
    /// After a member's value: `,` or `}`.
    ObjectNext,
    ArrayStart,
    ArrayNext,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullValue {
    at: At,
    open: [Open; MAX_NESTING],
    depth: u8,
}

impl FullValue {
    pub fn new(root: u32) -> FullValue {
        FullValue {
            at: At::Value(root),
            open: [Open::Array { node: 0, count: 0 }; MAX_NESTING],
            depth: 0,
        }
    }

    /// Takes byte `b`: `Done` when it completes the value, `DoneReprocess` when the value was
    /// complete before it (a number) and `b` belongs to what follows.
    pub fn step(&mut self, s: &FullSchemas, b: u8) -> Step {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        let in_text =
            matches!(self.at, At::Free(_) | At::Literal(..) | At::Pattern { .. } | At::Key(_));
        if ws && !in_text {
            return Step::Rejected;
        }
        match self.at {
            At::Value(node) => self.begin(s, node, b),
            At::Free(mut value) => {
                let step = value.step(b, None);
                self.at = At::Free(value);
                self.after_leaf(s, b, step)
            }
            At::Literal(node, at) => {
                let Node::Literals(set) = &s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                let Some(at) = set.advance(at, b) else {
                    return Step::Rejected;
                };
                if set.complete(at).is_some() {
                    return self.value_done();
                }
                self.at = At::Literal(node, at);
                Step::Consumed
            }
            At::Number(node, mut number) => {
                let Node::Number(bounds) = &s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                let step = number.step(b, bounds);
                self.at = At::Number(node, number);
                self.after_leaf(s, b, step)
            }
            At::Pattern { node, state, chars, mut marker } => {
                let Node::Pattern(pattern, length) = &s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                if b == b'"' {
                    return if pattern.matches(state) && chars >= length.min {
                        self.value_done()
                    } else {
                        Step::Rejected
                    };
                }
                let Some(state) = pattern.advance(state, b) else {
                    return Step::Rejected;
                };
                if !marker.step(markers::IN_STRINGS, b) {
                    return Step::Rejected;
                }
                let chars = chars + 1;
                if chars.saturating_add(pattern.to_end(state)) > length.max {
                    return Step::Rejected;
                }
                self.at = At::Pattern { node, state, chars, marker };
                Step::Consumed
            }
            At::ObjectStart | At::ObjectNext | At::KeyOpen => {
                let Some(Open::Object { node, used }) = self.top() else {
                    return Step::Rejected;
                };
                let Node::Object { keys, required, .. } = &s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                let unused = keys.tags(keys.start()).iter().any(|&k| used & (1 << k) == 0);
                match (self.at, b) {
                    (At::ObjectStart | At::KeyOpen, b'"') if unused => {
                        self.go(At::Key(keys.start()))
                    }
                    (At::ObjectNext, b',') if unused => self.go(At::KeyOpen),
                    (At::ObjectStart | At::ObjectNext, b'}') if used & required == *required => {
                        self.close()
                    }
                    _ => Step::Rejected,
                }
            }
            At::Key(at) => {
                let Some(Open::Object { node, used }) = self.top() else {
                    return Step::Rejected;
                };
                let Node::Object { keys, .. } = &s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                let Some(at) = keys.advance(at, b) else {
                    return Step::Rejected;
                };
                if keys.tags(at).iter().all(|&k| used & (1 << k) != 0) {
                    return Step::Rejected;
                }
                match keys.complete(at) {
                    Some(key) => {
                        self.open[self.depth as usize - 1] =
                            Open::Object { node, used: used | 1 << key };
                        self.go(At::Colon(key))
                    }
                    None => self.go(At::Key(at)),
                }
            }
            At::Colon(key) => {
                let Some(Open::Object { node, .. }) = self.top() else {
                    return Step::Rejected;
                };
                let Node::Object { children, .. } = &s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                match b {
                    b':' => self.go(At::Value(children[key as usize])),
                    _ => Step::Rejected,
                }
            }
            At::ArrayStart | At::ArrayNext => {
                let Some(Open::Array { node, count }) = self.top() else {
                    return Step::Rejected;
                };
                let Node::Array { items, min, max } = s.nodes[node as usize] else {
                    return Step::Rejected;
                };
                match (self.at, b) {
                    (_, b']') if count >= min => self.close(),
                    (At::ArrayNext, b',') if count < max => {
                        self.open[self.depth as usize - 1] = Open::Array { node, count: count + 1 };
                        self.go(At::Value(items))
                    }
                    (At::ArrayStart, _) if max > 0 => {
                        self.open[self.depth as usize - 1] = Open::Array { node, count: 1 };
                        self.begin(s, items, b)
                    }
                    _ => Step::Rejected,
                }
            }
            At::Done => Step::Rejected,
        }
    }

    /// The first byte of a value of `node`.
    fn begin(&mut self, s: &FullSchemas, node: u32, b: u8) -> Step {
        match &s.nodes[node as usize] {
            Node::Free(kind, length) => {
                let mut value = JsonValue::new(*kind, *length);
                let step = value.step(b, None);
                self.at = At::Free(value);
                self.after_leaf(s, b, step)
            }
            Node::Literals(set) => {
                self.at = At::Literal(node, set.start());
                self.step(s, b)
            }
            Node::Number(_) => {
                self.at = At::Number(node, BoundedNumber::default());
                self.step(s, b)
            }
            Node::Pattern(pattern, length)
                if b == b'"' && pattern.to_end(pattern.start()) <= length.max =>
            {
                self.go(At::Pattern {
                    node,
                    state: pattern.start(),
                    chars: 0,
                    marker: Watch::default(),
                })
            }
            Node::Object { .. } if b == b'{' => {
                self.push(Open::Object { node, used: 0 }, At::ObjectStart)
            }
            Node::Array { .. } if b == b'[' => {
                self.push(Open::Array { node, count: 0 }, At::ArrayStart)
            }
            _ => Step::Rejected,
        }
    }

    /// What a leaf's step means for the whole value.
    fn after_leaf(&mut self, s: &FullSchemas, b: u8, step: Step) -> Step {
        match step {
            Step::Consumed | Step::Rejected => step,
            Step::Done => self.value_done(),
            Step::DoneReprocess => match self.value_done() {
                Step::Done => Step::DoneReprocess,
                _ => self.step(s, b),
            },
        }
    }

    fn top(&self) -> Option<Open> {
        self.depth.checked_sub(1).map(|d| self.open[d as usize])
    }

    fn go(&mut self, at: At) -> Step {
        self.at = at;
        Step::Consumed
    }

    fn push(&mut self, open: Open, at: At) -> Step {
        // The schema's nesting is checked at compile time; this keeps a bad state from panicking.
        if self.depth as usize >= MAX_NESTING {
            return Step::Rejected;
        }
        self.open[self.depth as usize] = open;
        self.depth += 1;
        self.go(at)
    }

    fn close(&mut self) -> Step {
        self.depth -= 1;
        self.value_done()
    }

    /// A value just ended: the whole value, or one inside the innermost open container.
    fn value_done(&mut self) -> Step {
        match self.top() {
            None => {
                self.at = At::Done;
                Step::Done
            }
            Some(Open::Object { .. }) => self.go(At::ObjectNext),
            Some(Open::Array { .. }) => self.go(At::ArrayNext),
        }
    }
}
