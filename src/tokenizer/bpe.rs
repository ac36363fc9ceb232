//! Score-ordered BPE over one marker-free segment.
//!
//! Upstream's reference rescans all adjacent pairs after every merge (quadratic) and merges the
//! pair with the highest score, the leftmost one among equal scores. This does the same merges
//! with a heap of candidate pairs keyed (score desc, left position asc) over a linked list of
//! symbols. Merging never reorders symbols, so a symbol's starting byte is a faithful "leftmost"
//! key. A candidate is stale when either of its symbols has grown or vanished since it was
//! pushed; those are skipped when popped.
use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Ordering;

use super::{PieceKind, Tokenizer};

const NONE: u32 = u32::MAX;

/// A run of the segment; `len == 0` marks one absorbed into its left neighbour.
#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    len: u32,
    prev: u32,
    next: u32,
}

struct Candidate {
    score: f32,
    left: u32,
    left_len: u32,
    right_len: u32,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // Scores are never NaN (the blob reader refuses them), so partial_cmp is total here;
        // equal scores (including 0.0 vs -0.0) fall through to the position, leftmost first.
        self.score
            .partial_cmp(&other.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| other.left.cmp(&self.left))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

pub(super) fn encode_segment(tok: &Tokenizer, seg: &str, out: &mut Vec<u32>) {
    if seg.is_empty() {
        return;
    }
    let mut symbols: Vec<Symbol> = seg
        .char_indices()
        .map(|(start, c)| Symbol {
            start: start as u32,
            len: c.len_utf8() as u32,
            prev: NONE,
            next: NONE,
        })
        .collect();
    let count = symbols.len() as u32;
    for i in 0..count {
        let s = &mut symbols[i as usize];
        s.prev = if i == 0 { NONE } else { i - 1 };
        s.next = if i + 1 == count { NONE } else { i + 1 };
    }

    let mut heap = BinaryHeap::new();
    for i in 0..count {
        push_pair(tok, seg, &symbols, i, &mut heap);
    }
    while let Some(c) = heap.pop() {
        let left = symbols[c.left as usize];
        if left.len != c.left_len || left.next == NONE {
            continue;
        }
        let right = symbols[left.next as usize];
        if right.len != c.right_len {
            continue;
        }
        let merged = c.left as usize;
        symbols[merged].len += right.len;
        symbols[merged].next = right.next;
        if right.next != NONE {
            symbols[right.next as usize].prev = c.left;
        }
        symbols[left.next as usize].len = 0;
        if left.prev != NONE {
            push_pair(tok, seg, &symbols, left.prev, &mut heap);
        }
        push_pair(tok, seg, &symbols, c.left, &mut heap);
    }

    // Symbol 0 is never absorbed (merges fold the right symbol into the left).
    let mut i = 0;
    while i != NONE {
        let s = symbols[i as usize];
        emit(tok, &seg[s.start as usize..(s.start + s.len) as usize], out);
        i = s.next;
    }
}

/// Queues the pair (left, left.next) if its concatenation is a piece.
fn push_pair(
    tok: &Tokenizer,
    seg: &str,
    symbols: &[Symbol],
    left: u32,
    heap: &mut BinaryHeap<Candidate>,
) {
    let l = symbols[left as usize];
    if l.next == NONE {
        return;
    }
    let r = symbols[l.next as usize];
    let text = &seg[l.start as usize..(r.start + r.len) as usize];
    if let Some(id) = piece(tok, text) {
        heap.push(Candidate {
            score: tok.vocab.pieces[id as usize].score,
            left,
            left_len: l.len,
            right_len: r.len,
        });
    }
}

/// One final symbol: its piece, else its UTF-8 bytes as byte pieces, else `unk`.
fn emit(tok: &Tokenizer, text: &str, out: &mut Vec<u32>) {
    if let Some(id) = piece(tok, text) {
        out.push(id);
    } else if tok.byte_fallback {
        // A byte without a byte piece would be a KeyError upstream; `unk` is the safe stand-in.
        out.extend(text.bytes().map(|b| tok.byte_ids[b as usize].unwrap_or(tok.specials[3])));
    } else {
        out.push(tok.specials[3]);
    }
}

/// The piece `text` merges into. Never a marker: in template text every marker's surface was
/// cut out before BPE, so no segment holds one (upstream's ids are unchanged), and in literal
/// text a typed marker must stay plain pieces. Never a control, unknown or special piece
/// either (`</s>`, `<s>`, `<pad>`, `<unk>`, whatever their kind in a crafted vocabulary): text
/// is never a control token, so `hello </s>` cannot end a turn; such text falls back to the
/// pieces of its parts.
fn piece(tok: &Tokenizer, text: &str) -> Option<u32> {
    tok.vocab.lookup(text).filter(|&id| {
        let kind = tok.vocab.pieces[id as usize].kind;
        let control =
            matches!(kind, PieceKind::UserDefined | PieceKind::Control | PieceKind::Unknown);
        !control && !tok.specials.contains(&id)
    })
}
