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
}

impl PrefixCache {
    /// Forgets everything (the state was reset).
    pub(super) fn clear(&mut self) {
        self.held.clear();
        self.saved.clear();
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

    /// Brings `net` to a fresh state's position after `ids` (non-empty), reusing the longest
    /// prefix it can, and keeps copies of the state after `ids[..b]` for each of `boundaries`
    /// (where the next request may diverge) in place of the older ones. The logits after the
    /// last id land in `logits`. Returns how many ids were reused.
    pub(super) fn prefill(&mut self, net: &mut dyn Net, ids: &[u32], boundaries: &[usize], logits: &mut [f32]) -> Result<usize> {
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
        wanted.sort_unstable();
        wanted.dedup();
        self.saved.retain(|(at, _)| wanted.contains(at));
        let result = (|| {
            for b in wanted.into_iter().filter(|&b| b >= from && b > 0) {
                if self.saved.iter().any(|(at, _)| *at == b) {
                    continue;
                }
                let start = self.held.len();
                if b > start {
                    net.feed(&ids[start..b], logits)?;
                    self.held.extend_from_slice(&ids[start..b]);
                }
                self.saved.push((b, net.mark()));
            }
            let start = self.held.len();
            net.feed(&ids[start..], logits)?;
            self.held.extend_from_slice(&ids[start..]);
            Ok(from)
        })();
        if result.is_err() {
            net.reset();
            self.clear();
        }
        result
    }
}

/// How many leading ids `a` and `b` share.
pub(super) fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
