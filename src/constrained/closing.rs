//! Closing a required call before the budget runs out.
//!
//! With a call required (`require_call`), a turn that runs out of tokens inside a value (a
//! small model repeating itself in a free-text argument) would end unparsed, with no call. So
//! the engine asks, every step, for the shortest way the matcher knows to finish from where
//! it is — close the open value, write the required keys with the smallest values their
//! schema allows, close the call, the list and `</tool_call>` — and writes it once the budget
//! left is down to its length plus [`MARGIN`]. It is found greedily, a byte at a time: the
//! byte the format expects where it is fixed text, else the first byte in [`ORDER`] the
//! matcher accepts (a quote or a bracket closes most things; a digit is the shortest number).
use alloc::format;
use alloc::vec::Vec;

use super::matcher::Matcher;
use super::schema::Grammar;
use super::TokenTable;
use crate::tokenizer::Tokenizer;

/// Bytes tried first, in order, where the format does not fix the next one: closers, then
/// what spells a number, a `true`, a name or a key; whitespace and the rest only after them.
const ORDER: &[u8] =
    b"\"}]:,{[0<>/tolcan_ebdfghijkmpqrsuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ123456789.-+";

/// Bytes a closing may take before it is given up (a grammar that cannot finish greedily).
const MAX_BYTES: usize = 1024;

/// Tokens of slack: a step can lengthen the closing (a new key opens a value to close).
pub const MARGIN: usize = 4;

/// The shortest bytes found that take `matcher` to the end of the turn.
pub(super) fn closing_bytes(matcher: &Matcher, g: &Grammar) -> Option<Vec<u8>> {
    let mut m = *matcher;
    let mut out = Vec::new();
    while !m.can_stop() {
        if out.len() == MAX_BYTES {
            return None;
        }
        let hints = m.closing_hints(g);
        // Any other byte last: an extractive copy may need a space, punctuation or UTF-8.
        let rest = (b' '..=0xff).filter(|b| !ORDER.contains(b) && *b != 0x7f);
        let b = hints
            .iter()
            .flatten()
            .copied()
            .chain(ORDER.iter().copied())
            .chain(rest)
            .find(|&b| m.clone().advance(g, b))?;
        m.advance(g, b);
        out.push(b);
    }
    Some(out)
}

/// The closing as tokens the model can emit: longest pieces first, byte pieces where no piece
/// spells the rest. `None` when the vocabulary cannot spell it.
pub(super) fn closing_tokens(
    matcher: &Matcher,
    g: &Grammar,
    tok: &Tokenizer,
    table: &TokenTable,
) -> Option<Vec<u32>> {
    let bytes = closing_bytes(matcher, g)?;
    let mut ids = Vec::new();
    let mut m = *matcher;
    let mut at = 0;
    while at < bytes.len() {
        let longest = (bytes.len() - at).min(tok.max_token_bytes());
        let id = (1..=longest).rev().find_map(|len| {
            let text = core::str::from_utf8(&bytes[at..at + len]).ok()?;
            tok.piece_id(text).filter(|&id| table.token(id as usize) == text.as_bytes())
        });
        let id = id.or_else(|| tok.piece_id(&format!("<0x{:02X}>", bytes[at])))?;
        let piece = table.token(id as usize);
        if piece.is_empty() || !m.feed(g, piece) {
            return None;
        }
        at += piece.len();
        ids.push(id);
    }
    Some(ids)
}
