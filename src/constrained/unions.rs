//! `anyOf`/`oneOf` and type lists compiled to what the matcher can tell apart as it writes:
//! alternatives whose first bytes differ (a type each: `null` beside a string, an object beside
//! an array), and objects told apart by one required key whose `const`/`enum` values differ
//! (a discriminated union), that key written first; `const`/`enum` alternatives are merged into
//! one set. Told apart this way, exactly one alternative holds for every value written, so
//! `oneOf` is met as well as `anyOf` (merged literals are distinct values, each from one).
use alloc::vec::Vec;

use super::full_schema::{unsupported, FullSchemas, Node};
use super::literals::LiteralSet;
use super::schema::JsonType;
use crate::Result;

/// A set of bytes (ASCII: every value starts with one).
type Bytes = u128;

fn bytes(of: &[u8]) -> Bytes {
    of.iter().fold(0, |set, &b| set | 1 << (b & 0x7f))
}

/// The one node for `alternatives` (compiled schemas).
pub fn union(out: &mut FullSchemas, mut alternatives: Vec<u32>) -> Result<u32> {
    // `const`/`enum` alternatives (zod's union of literals) are one set of texts.
    let literal = |out: &FullSchemas, a: &u32| matches!(out.nodes[*a as usize], Node::Literals(_));
    if alternatives.iter().filter(|a| literal(out, a)).count() > 1 {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for &a in alternatives.iter().filter(|a| literal(out, a)) {
            if let Node::Literals(set) = &out.nodes[a as usize] {
                for (text, _) in set.entries() {
                    if !texts.iter().any(|t| t == text) {
                        texts.push(text.to_vec());
                    }
                }
            }
        }
        let set = literal_set(texts.into_iter().enumerate().map(|(i, t)| (t, i as u32)))?;
        alternatives.retain(|a| !literal(out, a));
        alternatives.push(out.push(Node::Literals(set)));
    }
    let objects: Vec<u32> = alternatives
        .iter()
        .copied()
        .filter(|&a| matches!(out.nodes[a as usize], Node::Object { .. }))
        .collect();
    if objects.len() > 1 {
        let tagged = tagged(out, &objects)?;
        alternatives.retain(|a| !objects.contains(a));
        alternatives.push(tagged);
    }
    if let [one] = alternatives[..] {
        return Ok(one);
    }
    let mut seen = 0;
    let mut alts = Vec::new();
    for a in alternatives {
        let first = first_bytes(out, a);
        if first & seen != 0 {
            return Err(unsupported(
                "anyOf/oneOf alternatives that start alike (they must differ in type, or be objects told apart by a const key)",
            ));
        }
        seen |= first;
        alts.push((first, a));
    }
    Ok(out.push(Node::Union(alts)))
}

/// The bytes a value of `node` may start with.
pub fn first_bytes(out: &FullSchemas, node: u32) -> Bytes {
    let number = bytes(b"-0123456789");
    match &out.nodes[node as usize] {
        Node::Free(None, _) => bytes(b"\"-0123456789tfn{["),
        Node::Free(Some(JsonType::Boolean), _) => bytes(b"tf"),
        Node::Free(Some(JsonType::Integer | JsonType::Number), _) | Node::Number(_) => number,
        Node::Free(Some(JsonType::String), _) | Node::Pattern(..) => bytes(b"\""),
        Node::Free(Some(JsonType::Object), _) | Node::Object { .. } | Node::Tagged { .. } => {
            bytes(b"{")
        }
        Node::Free(Some(JsonType::Array), _) | Node::Array { .. } => bytes(b"["),
        Node::Literals(set) => set.entries().fold(0, |s, (text, _)| s | bytes(&text[..1])),
        Node::Union(alts) => alts.iter().fold(0, |s, (first, _)| s | first),
    }
}

/// Objects told apart by the first key (in the first object's order) that every one requires
/// with `const`/`enum` values no two of them share.
fn tagged(out: &mut FullSchemas, objects: &[u32]) -> Result<u32> {
    let Node::Object { keys, .. } = &out.nodes[objects[0] as usize] else {
        return Err(unsupported("anyOf/oneOf of objects"));
    };
    let candidates: Vec<Vec<u8>> = keys.entries().map(|(key, _)| key.to_vec()).collect();
    for key in &candidates {
        let mut values = Vec::new();
        let mut alts = Vec::new();
        for (i, &object) in objects.iter().enumerate() {
            let Node::Object { keys, children, required } = &out.nodes[object as usize] else {
                break;
            };
            let Some((_, k)) = keys.entries().find(|(other, _)| other == key) else { break };
            let Node::Literals(set) = &out.nodes[children[k as usize] as usize] else { break };
            if required & 1 << k == 0 {
                break;
            }
            values.extend(set.entries().map(|(text, _)| (text.to_vec(), i as u32)));
            alts.push((object, k));
        }
        if alts.len() < objects.len() {
            continue;
        }
        // Sorted: a value two objects share sits beside itself.
        let values = literal_set(values.into_iter())?;
        if values.entries().zip(values.entries().skip(1)).any(|(a, b)| a.0 == b.0) {
            continue;
        }
        let mut head = alloc::vec![b'{', b'"'];
        head.extend_from_slice(key);
        head.push(b':');
        return Ok(out.push(Node::Tagged { head, values, alts }));
    }
    Err(unsupported(
        "anyOf/oneOf of objects without a required key whose const/enum values tell them apart",
    ))
}

/// Literal texts the matcher can tell apart as they end (a number that prefixes another, 1 and
/// 12, could not say where it ends).
pub fn literal_set(entries: impl Iterator<Item = (Vec<u8>, u32)>) -> Result<LiteralSet> {
    let entries: Vec<(Vec<u8>, u32)> = entries.collect();
    let prefixes = |a: &[u8]| entries.iter().any(|(b, _)| b.len() > a.len() && b.starts_with(a));
    if entries.iter().any(|(a, _)| prefixes(a)) {
        return Err(unsupported("enum numbers where one is a prefix of another"));
    }
    Ok(LiteralSet::new(entries))
}
