//! A sorted set of byte strings matched one byte at a time (tool names, argument keys, enum
//! values). Items that share the bytes matched so far are contiguous in sorted order, so the
//! matching state is just a range and a depth: small, `Copy`, and cheap to clone once per
//! candidate token.
use alloc::vec::Vec;

#[derive(Debug, Clone, Default)]
pub struct LiteralSet {
    /// Sorted byte strings.
    items: Vec<Vec<u8>>,
    /// What each item stands for (a tool or parameter index), parallel to `items`.
    tags: Vec<u32>,
}

/// Items `lo..hi` agree with the `depth` bytes matched so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    lo: u32,
    hi: u32,
    depth: u32,
}

impl LiteralSet {
    pub fn new(mut entries: Vec<(Vec<u8>, u32)>) -> LiteralSet {
        crate::sort::sort(&mut entries);
        let (items, tags) = entries.into_iter().unzip();
        LiteralSet { items, tags }
    }

    pub fn start(&self) -> Cursor {
        Cursor { lo: 0, hi: self.items.len() as u32, depth: 0 }
    }

    /// The cursor after byte `b`, or `None` when no item continues with it.
    pub fn advance(&self, at: Cursor, b: u8) -> Option<Cursor> {
        let depth = at.depth as usize;
        let range = &self.items[at.lo as usize..at.hi as usize];
        let first = range.iter().position(|item| item.get(depth) == Some(&b))?;
        let count = range[first..].iter().take_while(|item| item.get(depth) == Some(&b)).count();
        let lo = at.lo + first as u32;
        Some(Cursor { lo, hi: lo + count as u32, depth: at.depth + 1 })
    }

    /// The tag of the item the cursor has matched completely, if any (the shortest sorts first).
    pub fn complete(&self, at: Cursor) -> Option<u32> {
        let i = at.lo as usize;
        (at.lo < at.hi && self.items[i].len() == at.depth as usize).then(|| self.tags[i])
    }

    /// Each item's bytes and tag.
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.items.iter().map(Vec::as_slice).zip(self.tags.iter().copied())
    }

    /// Tags of the items still reachable from the cursor.
    pub fn tags(&self, at: Cursor) -> &[u32] {
        &self.tags[at.lo as usize..at.hi as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn set(words: &[&str]) -> LiteralSet {
        LiteralSet::new(
            words.iter().enumerate().map(|(i, w)| (w.as_bytes().to_vec(), i as u32)).collect(),
        )
    }

    fn walk(s: &LiteralSet, text: &str) -> Option<Cursor> {
        text.bytes().try_fold(s.start(), |c, b| s.advance(c, b))
    }

    #[test]
    fn a_cursor_narrows_to_the_items_sharing_the_prefix() {
        let s = set(&["on\"", "off\"", "dim\""]);
        let c = walk(&s, "o").unwrap();
        let mut tags = s.tags(c).to_vec();
        tags.sort();
        assert_eq!(tags, vec![0, 1]);
        assert_eq!(s.complete(c), None);
        assert_eq!(s.complete(walk(&s, "off\"").unwrap()), Some(1));
        assert!(walk(&s, "of\"").is_none() && walk(&s, "x").is_none());
    }

    #[test]
    fn an_item_that_prefixes_another_completes_first() {
        let s = set(&["ab", "a"]);
        assert_eq!(s.complete(walk(&s, "a").unwrap()), Some(1));
        assert_eq!(s.complete(walk(&s, "ab").unwrap()), Some(0));
    }
}
