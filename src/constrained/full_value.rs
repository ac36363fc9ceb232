//! One JSON value held to its whole compiled schema ([`super::full_schema`]), byte by byte.
//! Open objects and arrays sit on a fixed stack, so the state stays `Copy` (checking a token
//! is: copy, feed its bytes). Every prefix accepted can still be completed to a value the
//! schema accepts: keys are offered only while unused ones remain, `}` only once the required
//! keys are written, `]` and `,` only within the item counts (and unused enum items, for unique
//! ones), digits only while the number can still land in its bounds, pattern characters only
//! while the pattern and length can be met. A union takes the alternative its first byte (or
//! its discriminating key's value) picks.
//! The JSON is compact, as the models write their calls: whitespace only inside strings (and
//! inside values the schema leaves free), so a model cannot idle in a run of spaces.
use super::bounded_number::BoundedNumber;
use super::dfa::StringDfa;
use super::full_schema::{FullSchemas, Node, MAX_NESTING};
use super::json_value::{JsonValue, Step};
use super::literals::Cursor;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `used`: a bit per key written.
    Object { node: u32, used: u64 },
    /// `used`: a bit per enum item written (unique arrays).
    Array { node: u32, count: u32, used: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// A value of this node starts (whitespace first).
    Value(u32),
    Free(JsonValue),
    Literal(u32, Cursor),
    Number(u32, BoundedNumber),
    /// Inside a patterned string: its automaton's state and the characters so far.
    Pattern {
        node: u32,
        state: u8,
        chars: u32,
    },
    /// A tagged union's fixed `{"key":` written this far, then its value.
    Tag(u32, u8),
    TagValue(u32, Cursor),
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
            open: [Open::Array { node: 0, count: 0, used: 0 }; MAX_NESTING],
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
            At::Literal(node, at) => self.literal(s, node, at, b),
            At::Tag(node, at) => self.tag(s, node, at, b),
            At::TagValue(node, at) => self.tag_value(s, node, at, b),
            At::Number(node, number) => self.number(s, node, number, b),
            At::Pattern { node, state, chars } => self.pattern(s, node, state, chars, b),
            At::ObjectStart | At::ObjectNext | At::KeyOpen => self.object(s, b),
            At::Key(at) => self.key(s, at, b),
            At::Colon(key) => self.colon(s, key, b),
            At::ArrayStart | At::ArrayNext => self.array(s, b),
            At::Done => Step::Rejected,
        }
    }

    /// One of a set of literals (consts and enums), matched up to `at`.
    fn literal(&mut self, s: &FullSchemas, node: u32, at: Cursor, b: u8) -> Step {
        let Node::Literals(set) = &s.nodes[node as usize] else {
            return Step::Rejected;
        };
        let Some(at) = set.advance(at, b) else {
            return Step::Rejected;
        };
        // In a unique array, only items not written yet.
        let unique = match self.top() {
            Some(Open::Array { node, used, .. })
                if matches!(s.nodes[node as usize], Node::Array { unique: true, .. }) =>
            {
                Some(used)
            }
            _ => None,
        };
        let used = unique.unwrap_or(0);
        if set.tags(at).iter().all(|&tag| used.checked_shr(tag).unwrap_or(0) & 1 == 1) {
            return Step::Rejected;
        }
        if let Some(tag) = set.complete(at) {
            if let (Some(used), Some(Open::Array { node, count, .. })) = (unique, self.top()) {
                self.open[self.depth as usize - 1] =
                    Open::Array { node, count, used: used | 1 << tag };
            }
            return self.value_done();
        }
        self.at = At::Literal(node, at);
        Step::Consumed
    }

    /// A tagged union's head (`{"tag":"`) matched up to `at`.
    fn tag(&mut self, s: &FullSchemas, node: u32, at: u8, b: u8) -> Step {
        let Node::Tagged { head, values, .. } = &s.nodes[node as usize] else {
            return Step::Rejected;
        };
        if head.get(at as usize) != Some(&b) {
            return Step::Rejected;
        }
        self.go(if at as usize + 1 == head.len() {
            At::TagValue(node, values.start())
        } else {
            At::Tag(node, at + 1)
        })
    }

    /// A tagged union's tag value matched up to `at`: once whole, its alternative's object.
    fn tag_value(&mut self, s: &FullSchemas, node: u32, at: Cursor, b: u8) -> Step {
        let Node::Tagged { values, alts, .. } = &s.nodes[node as usize] else {
            return Step::Rejected;
        };
        let Some(at) = values.advance(at, b) else {
            return Step::Rejected;
        };
        match values.complete(at) {
            Some(tag) => {
                let (object, key) = alts[tag as usize];
                self.push(Open::Object { node: object, used: 1 << key }, At::ObjectNext)
            }
            None => self.go(At::TagValue(node, at)),
        }
    }

    /// A number within the node's bounds.
    fn number(&mut self, s: &FullSchemas, node: u32, mut number: BoundedNumber, b: u8) -> Step {
        let Node::Number(bounds) = &s.nodes[node as usize] else {
            return Step::Rejected;
        };
        let step = number.step(b, bounds);
        self.at = At::Number(node, number);
        self.after_leaf(s, b, step)
    }

    /// A string held to the node's automaton (formats, patterns, lengths): `chars` written.
    fn pattern(&mut self, s: &FullSchemas, node: u32, state: u8, chars: u32, b: u8) -> Step {
        let Node::Pattern(dfa, length) = &s.nodes[node as usize] else {
            return Step::Rejected;
        };
        if b == b'"' {
            return if dfa.can_close(state, chars, *length) {
                self.value_done()
            } else {
                Step::Rejected
            };
        }
        match dfa.advance(state, b).filter(|&t| dfa.fits(t, chars + 1, *length)) {
            Some(state) => self.go(At::Pattern { node, state, chars: chars + 1 }),
            None => Step::Rejected,
        }
    }

    /// In an object: after `{`, after a member, or after `,` (a key, `,` or `}`).
    fn object(&mut self, s: &FullSchemas, b: u8) -> Step {
        let Some(Open::Object { node, used }) = self.top() else {
            return Step::Rejected;
        };
        let Node::Object { keys, required, .. } = &s.nodes[node as usize] else {
            return Step::Rejected;
        };
        let unused = keys.tags(keys.start()).iter().any(|&k| used & (1 << k) == 0);
        match (self.at, b) {
            (At::ObjectStart | At::KeyOpen, b'"') if unused => self.go(At::Key(keys.start())),
            (At::ObjectNext, b',') if unused => self.go(At::KeyOpen),
            (At::ObjectStart | At::ObjectNext, b'}') if used & required == *required => {
                self.close()
            }
            _ => Step::Rejected,
        }
    }

    /// An object's key matched up to `at`: one of its keys, not written yet.
    fn key(&mut self, s: &FullSchemas, at: Cursor, b: u8) -> Step {
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
                self.open[self.depth as usize - 1] = Open::Object { node, used: used | 1 << key };
                self.go(At::Colon(key))
            }
            None => self.go(At::Key(at)),
        }
    }

    /// After key `key`: `:`, then its value.
    fn colon(&mut self, s: &FullSchemas, key: u32, b: u8) -> Step {
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

    /// In an array: after `[` (an item or `]`) or after an item (`,` or `]`), within its counts.
    fn array(&mut self, s: &FullSchemas, b: u8) -> Step {
        let Some(Open::Array { node, count, used }) = self.top() else {
            return Step::Rejected;
        };
        let Node::Array { items, min, max, .. } = s.nodes[node as usize] else {
            return Step::Rejected;
        };
        match (self.at, b) {
            (_, b']') if count >= min => self.close(),
            (At::ArrayNext, b',') if count < max => {
                self.open[self.depth as usize - 1] = Open::Array { node, count: count + 1, used };
                self.go(At::Value(items))
            }
            (At::ArrayStart, _) if max > 0 => {
                self.open[self.depth as usize - 1] = Open::Array { node, count: 1, used };
                self.begin(s, items, b)
            }
            _ => Step::Rejected,
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
            Node::Pattern(..) if b == b'"' => {
                self.go(At::Pattern { node, state: StringDfa::START, chars: 0 })
            }
            Node::Union(alts) => {
                match alts.iter().find(|(first, _)| b < 128 && first >> b & 1 == 1) {
                    Some(&(_, alt)) => self.begin(s, alt, b),
                    None => Step::Rejected,
                }
            }
            Node::Tagged { .. } => {
                self.at = At::Tag(node, 0);
                self.step(s, b)
            }
            Node::Object { .. } if b == b'{' => {
                self.push(Open::Object { node, used: 0 }, At::ObjectStart)
            }
            Node::Array { .. } if b == b'[' => {
                self.push(Open::Array { node, count: 0, used: 0 }, At::ArrayStart)
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

    /// The byte that heads for the end where the schema fixes it or a pattern needs one
    /// ([`super::closing`] tries it first).
    pub fn hint(&self, s: &FullSchemas) -> Option<u8> {
        match (self.at, self.at_node(s)) {
            (At::Pattern { state, chars, .. }, Some(Node::Pattern(dfa, length))) => {
                if dfa.can_close(state, chars, *length) {
                    Some(b'"')
                } else {
                    dfa.hint(state, chars, *length)
                }
            }
            (At::Tag(_, at), Some(Node::Tagged { head, .. })) => head.get(at as usize).copied(),
            _ => None,
        }
    }

    fn at_node<'s>(&self, s: &'s FullSchemas) -> Option<&'s Node> {
        match self.at {
            At::Pattern { node, .. } | At::Tag(node, _) => s.nodes.get(node as usize),
            _ => None,
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
