//! Prefix-cached requests: a request whose ids start like what the sequence state already holds
//! runs only the ids after the shared prefix.
//!
//! Requests to one engine usually share a long head: the same system prompt and tool list with
//! a new query, or a conversation that grows by a turn. The cache remembers the ids the state
//! has consumed and saved copies of the state (a [`NetMark`]: KV rings, conv and Engram tails,
//! head pools) where the next request is expected to diverge: after the system prompt and tool
//! list (the first user text starts there) and before the newest message's text. A new
//! request then either
//! - runs on from where the state is, when everything the state holds is a prefix of its ids
//!   (a conversation's next turn: the previous prompt and completion, then the new turn);
//! - goes back to the latest saved copy within the shared prefix (same tools, new query; or a
//!   conversation whose last answer does not re-tokenize to the ids generated);
//! - or starts over.
//!
//! The state cannot be cut back to an arbitrary position: the conv and Engram tails and the
//! head pools hold a running summary of every earlier token, and a windowed ring has
//! overwritten old positions. A saved copy carries all of it, so going back is exact in every
//! KV precision, numerics and window, at the price of two more copies of the KV rings in memory.
//! Running a sequence in pieces gives the logits of running it at once, bit for bit (every
//! kernel computes each row on its own), so a cached request's logits and tokens are a fresh
//! session's. The last prompt id always runs again, since the logits after it are what the
//! request samples from.
use alloc::vec::Vec;

use super::net::{Net, NetMark};
use crate::Result;

#[derive(Default)]
pub(super) struct PrefixCache {
    /// The ids the state has consumed, in order.
    held: Vec<u32>,
    /// Copies of the state after `held[..at]`, with `at`, by position.
    saved: Vec<(usize, NetMark)>,
    /// Positions of the prefill in progress where a copy is still to be kept, ascending.
    to_save: Vec<usize>,
}

impl PrefixCache {
    /// Forgets everything (the state was reset).
    pub(super) fn clear(&mut self) {
        self.held.clear();
        self.saved.clear();
        self.to_save.clear();
    }

    /// Starts over from a state that holds `ids` (a loaded snapshot), kept as a saved copy.
    pub(super) fn seed(&mut self, ids: &[u32], mark: NetMark) {
        self.held.clear();
        self.held.extend_from_slice(ids);
        self.saved.clear();
        self.saved.push((ids.len(), mark));
    }

    /// Records ids the state has just consumed.
    pub(super) fn push(&mut self, ids: &[u32]) {
        self.held.extend_from_slice(ids);
    }

    /// Starts bringing `net` to a fresh state's position after `ids` (non-empty), reusing the
    /// longest prefix it can: goes back to it and plans copies of the state after `ids[..b]` for
    /// each of `boundaries` (where the next request may diverge) in place of the older ones.
    /// [`Self::step`] then runs the rest. Returns how many ids were reused.
    pub(super) fn begin(&mut self, net: &mut dyn Net, ids: &[u32], boundaries: &[usize]) -> usize {
        let last = ids.len() - 1;
        let shared = common_prefix(&self.held, ids).min(last);
        self.saved.retain(|(at, _)| *at <= shared);
        let from = if shared == self.held.len() {
            shared
        } else if let Some((at, mark)) = self.saved.last() {
            net.rewind(mark);
            *at
        } else {
            net.reset();
            0
        };
        self.held.truncate(from);
        let mut wanted: Vec<usize> = boundaries.iter().map(|&b| b.min(last)).collect();
        crate::sort::sort(&mut wanted);
        wanted.dedup();
        self.saved.retain(|(at, _)| wanted.contains(at));
        wanted.retain(|&b| b >= from && b > 0 && !self.saved.iter().any(|(at, _)| *at == b));
        self.to_save = wanted;
        from
    }

    /// Runs at most `chunk` more of the ids [`Self::begin`] started (stopping early at a copy
    /// to keep); true once all of them have run. Running a sequence in pieces gives the same
    /// bits as running it at once, so the chunk size only decides how often a host can look
    /// for an abort.
    pub(super) fn step(
        &mut self,
        net: &mut dyn Net,
        ids: &[u32],
        chunk: usize,
        logits: &mut [f32],
    ) -> Result<bool> {
        let result = (|| {
            self.save_due(net);
            let start = self.held.len();
            if start == ids.len() {
                return Ok(true);
            }
            let next_save = self.to_save.first().copied().unwrap_or(ids.len());
            let end = next_save.min(start.saturating_add(chunk.max(1)));
            net.feed(&ids[start..end], logits)?;
            self.held.extend_from_slice(&ids[start..end]);
            self.save_due(net);
            Ok(end == ids.len())
        })();
        if result.is_err() {
            net.reset();
            self.clear();
        }
        result
    }

    /// Keeps a copy of the state if the position it has reached is one [`Self::begin`] planned.
    fn save_due(&mut self, net: &dyn Net) {
        while self.to_save.first() == Some(&self.held.len()) {
            self.saved.push((self.to_save.remove(0), net.mark()));
        }
    }
}

/// How many leading ids `a` and `b` share.
pub(super) fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Engine, LoadOptions};

    #[test]
    fn a_saved_state_past_where_two_requests_part_is_never_reused() {
        // Today's template always repeats the token before a saved position, so only a direct
        // test can tell a state saved one token past the shared prefix from a good one.
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact")).unwrap();
        let mut engine = Engine::load(&bytes, &LoadOptions::default()).unwrap();
        let first: Vec<u32> = (40..60).collect();
        let mut second = first.clone();
        second[9] = 99; // parts from `first` at 9, one token before the saved position 10
        let fresh = engine.logits_for(&second).unwrap();
        let want = &fresh[fresh.len() - engine.info.logits_len..];
        let mut cache = PrefixCache::default();
        let mut logits = alloc::vec![0.0; engine.info.logits_len];
        let mut run = |ids: &[u32], boundaries: &[usize], logits: &mut [f32]| {
            let reused = cache.begin(&mut *engine.net, ids, boundaries);
            while !cache.step(&mut *engine.net, ids, 7, logits).unwrap() {}
            reused
        };
        run(&first, &[10], &mut logits);
        let reused = run(&second, &[], &mut logits);
        assert!(reused <= 9, "reused {reused} ids past the shared 9");
        assert_eq!(logits, want, "the state after the second prompt is a fresh one's");
    }
}
