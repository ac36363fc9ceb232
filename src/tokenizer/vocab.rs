//! The piece table: surfaces in one arena plus a surface → id hash index.
//!
//! `alloc` has no hash map, and the merge loop looks up every candidate pair, so a small
//! open-addressing table (FNV-1a, linear probing, load <= 1/2) replaces a `BTreeMap` whose
//! string comparisons would dominate encoding.
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::Piece;

const EMPTY: u32 = u32::MAX;

#[derive(Clone)]
pub(super) struct Vocab {
    arena: String,
    pub pieces: Vec<Piece>,
    slots: Vec<u32>,
    /// Longest surface in bytes: longer pairs cannot be pieces and skip the lookup.
    pub max_len: usize,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Vocab {
    pub fn new(arena: String, pieces: Vec<Piece>) -> Self {
        let size = (pieces.len() * 2).next_power_of_two().max(2);
        let max_len = pieces.iter().map(|p| p.len as usize).max().unwrap_or(0);
        let mut vocab = Vocab { arena, pieces, slots: vec![EMPTY; size], max_len };
        for id in 0..vocab.pieces.len() as u32 {
            // A repeated surface maps to its last id, like upstream's `{piece: id}` dict.
            let slot = vocab.slot_for(vocab.surface(id).as_bytes());
            vocab.slots[slot] = id;
        }
        vocab
    }

    pub fn surface(&self, id: u32) -> &str {
        let p = &self.pieces[id as usize];
        &self.arena[p.start as usize..p.start as usize + p.len as usize]
    }

    /// The slot holding `key`, or the empty slot where it would go.
    fn slot_for(&self, key: &[u8]) -> usize {
        let mask = self.slots.len() - 1;
        let mut slot = fnv1a(key) as usize & mask;
        loop {
            let id = self.slots[slot];
            if id == EMPTY || self.surface(id).as_bytes() == key {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    pub fn lookup(&self, key: &str) -> Option<u32> {
        if key.len() > self.max_len {
            return None;
        }
        let id = self.slots[self.slot_for(key.as_bytes())];
        (id != EMPTY).then_some(id)
    }
}
