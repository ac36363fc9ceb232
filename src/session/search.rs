//! Value search ([`super::Request::value_search`]): each argument value chosen as a whole.
//!
//! Greedy decoding commits to a value's first token before it has seen the rest. A model that
//! gives a stray "a" the most weight must then spell something that starts with it, and under
//! the extractive rule that can be a piece of the request it never meant ("and 600"). Here the
//! value is the constrained token path with the highest probability under the constrained
//! distribution (each token's probability renormalised over the tokens the mask allows). The
//! search first runs the greedy path to the value's end, then takes paths off a heap best first,
//! dropping any that already score below the best complete path (a path's score only falls as it
//! grows); a complete path off the heap is the best of all. Within its budget it returns the most
//! likely value; past it, the best found, never worse than the greedy one. What lies between the
//! values (which tools, how many calls) stays greedy.
//!
//! The score was chosen on the generator's held-out examples (tools/train/LOG.md, session 19):
//! scoring by the full-softmax probability instead, or half way between the two, does no better.
//!
//! The sequence is marked where the value starts. Running a path that does not extend the one
//! just run rewinds to the mark and runs the path's tokens again, in one batch.
use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Ordering;

use super::unemittable::Unemittable;
use super::Engine;
use crate::constrained::{Checkpoint, Constraint, TokenTable};
use crate::Result;

/// Paths run per value at most; past it the best complete path found so far wins (when the
/// greedy path alone is longer, its tokens so far, and greedy decoding finishes the value).
const EXPANSIONS: usize = 64;
/// Continuations of a path kept, the most likely first.
const BRANCH: usize = 4;

struct Node {
    token: u32,
    /// `None`: the value's start.
    parent: Option<usize>,
    /// Log-probability of the path under the constrained distribution.
    score: f64,
    /// The constraint after the path.
    at: Checkpoint,
    /// The path has left the value (or ended the turn).
    done: bool,
    /// Its continuations are in the tree.
    expanded: bool,
    len: usize,
}

/// A node on the heap, best score first (the earlier node on ties).
struct Open {
    score: f64,
    node: usize,
}

impl PartialEq for Open {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Open {}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then(other.node.cmp(&self.node))
    }
}

/// The search's growing tree of paths.
struct Tree<'c> {
    constraint: &'c mut Constraint,
    never: &'c Unemittable,
    table: &'c TokenTable,
    nodes: Vec<Node>,
    heap: BinaryHeap<Open>,
    masked: Vec<f32>,
}

impl Tree<'_> {
    /// Adds the `BRANCH` most likely allowed continuations of `parent` (whose path leaves the
    /// constraint at `at`), given the logits after its path; returns the most likely one.
    fn expand(&mut self, parent: Option<usize>, at: Checkpoint, logits: &[f32]) -> Option<usize> {
        let (base, len) = parent.map_or((0.0, 0), |p| (self.nodes[p].score, self.nodes[p].len));
        self.masked.clear();
        self.masked.extend_from_slice(logits);
        self.constraint.restore(at);
        self.constraint.mask(self.table, &mut self.masked);
        self.never.mask(&mut self.masked);
        if let Some(p) = parent {
            self.nodes[p].expanded = true;
        }
        let first = self.nodes.len();
        let allowed = log_sum_exp(&self.masked);
        for id in top_allowed(&self.masked) {
            self.constraint.restore(at);
            self.constraint.accept(self.table, id);
            let done = self.table.is_stop(id) || !self.constraint.in_argument_value();
            let score = base + (logits[id as usize] as f64 - allowed);
            self.heap.push(Open { score, node: self.nodes.len() });
            self.nodes.push(Node {
                token: id,
                parent,
                score,
                at: self.constraint.checkpoint(),
                done,
                expanded: false,
                len: len + 1,
            });
        }
        (self.nodes.len() > first).then_some(first)
    }

    fn path(&self, node: usize) -> Vec<u32> {
        let mut path = Vec::with_capacity(self.nodes[node].len);
        let mut at = Some(node);
        while let Some(n) = at {
            path.push(self.nodes[n].token);
            at = self.nodes[n].parent;
        }
        path.reverse();
        path
    }
}

impl Engine<'_> {
    /// The tokens of the most likely value from here (the completion is at or inside an
    /// argument value): every token up to the one that leaves the value. The sequence, the
    /// logits and `constraint` (the request's) are left as they were.
    pub(super) fn search_value(&mut self, constraint: &mut Constraint) -> Result<Vec<u32>> {
        let Engine { net, logits, token_table, info, never, .. } = self;
        let Some(table) = token_table.as_ref() else { return Ok(Vec::new()) };
        let (start, mark, start_at) = (logits.clone(), net.mark(), constraint.checkpoint());
        let room = info.capacity - net.position();
        let mut tree = Tree {
            constraint,
            never,
            table,
            nodes: Vec::new(),
            heap: BinaryHeap::new(),
            masked: Vec::new(),
        };
        // The path the sequence holds now (`None`: the value's start).
        let mut loaded = None;
        let mut expansions = 0;
        // Runs `node`'s path and adds its continuations; false once the budget is spent.
        let mut run = |tree: &mut Tree, node: usize| -> Result<bool> {
            if expansions == EXPANSIONS || tree.nodes[node].len > room {
                return Ok(false);
            }
            expansions += 1;
            if tree.nodes[node].parent == loaded {
                net.feed(&[tree.nodes[node].token], logits)?;
            } else {
                net.rewind(&mark);
                net.feed(&tree.path(node), logits)?;
            }
            loaded = Some(node);
            tree.expand(Some(node), tree.nodes[node].at, logits);
            Ok(true)
        };
        let result = (|| {
            // The greedy path first: the value to beat.
            let mut node = tree.expand(None, start_at, &start);
            while let Some(n) = node.filter(|&n| !tree.nodes[n].done) {
                // Continuations are pushed most likely first.
                let first = tree.nodes.len();
                if !run(&mut tree, n)? {
                    return Ok(Some(n));
                }
                node = (tree.nodes.len() > first).then_some(first);
            }
            let Some(mut best) = node else { return Ok(None) };
            while let Some(Open { score, node }) = tree.heap.pop() {
                if score <= tree.nodes[best].score {
                    break;
                }
                if tree.nodes[node].done {
                    best = node;
                    break;
                }
                if !tree.nodes[node].expanded && !run(&mut tree, node)? {
                    break;
                }
            }
            Ok(Some(best))
        })();
        let path = result.map(|best| best.map(|n| tree.path(n)).unwrap_or_default());
        tree.constraint.restore(start_at);
        net.rewind(&mark);
        logits.copy_from_slice(&start);
        path
    }
}

/// `ln(sum(exp(x)))`, in f64.
fn log_sum_exp(x: &[f32]) -> f64 {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    if max == f64::NEG_INFINITY {
        return max;
    }
    max + libm::log(x.iter().map(|&v| libm::exp(v as f64 - max)).sum::<f64>())
}

/// Ids of the `BRANCH` highest finite entries of `masked`, highest first (lower id on ties).
fn top_allowed(masked: &[f32]) -> Vec<u32> {
    let mut top: Vec<u32> = Vec::with_capacity(BRANCH + 1);
    for (id, &v) in masked.iter().enumerate() {
        if v == f32::NEG_INFINITY || v.is_nan() {
            continue;
        }
        let at = top.iter().position(|&t| masked[t as usize] < v).unwrap_or(top.len());
        if at < BRANCH {
            top.insert(at, id as u32);
            top.truncate(BRANCH);
        }
    }
    top
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{Engine, LoadOptions};
    use crate::session::KvPrecision;

    /// Every committed fixture container of both generations.
    fn fixtures() -> Vec<(String, Vec<u8>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut out = Vec::new();
        for generation in ["v3", "v2"] {
            for dir in std::fs::read_dir(root.join(generation)).unwrap() {
                let path = dir.unwrap().path().join("model.cact");
                if path.exists() {
                    out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
                }
            }
        }
        assert!(out.len() >= 4, "fixtures missing under {}", root.display());
        out
    }

    #[test]
    fn a_rewound_sequence_runs_on_as_a_fresh_one_logits_and_head_pools() {
        for (name, bytes) in fixtures() {
            for kv in [KvPrecision::F32, KvPrecision::Int8] {
                let mut engine =
                    Engine::load(&bytes, &LoadOptions { kv: Some(kv), ..LoadOptions::default() })
                        .unwrap();
                let vocab = engine.info().logits_len as u32;
                let prefix: Vec<u32> = (0..9).map(|i| 3 + (i * 37) % (vocab - 3)).collect();
                let (detour, path) = ([5u32, 6, 7, 8, 9], [10u32, 11, 12]);

                engine.reset();
                engine.feed(&prefix).unwrap();
                let mark = engine.net.mark();
                engine.feed(&detour).unwrap();
                engine.net.rewind(&mark);
                engine.feed(&path).unwrap();
                let rewound = engine.logits.clone();
                let all: Vec<u32> = prefix.iter().chain(&path).copied().collect();
                let rewound_confidence = engine
                    .info
                    .heads
                    .contains(&super::super::HeadKind::Confidence)
                    .then(|| engine.net.confidence(&all).unwrap());

                engine.reset();
                engine.feed(&all).unwrap();
                let scale = engine.logits.iter().fold(0f32, |m, v| m.max(v.abs()));
                for (a, b) in rewound.iter().zip(&engine.logits) {
                    assert!((a - b).abs() <= 1e-5 * scale, "{name} {kv:?}: {a} against {b} fresh");
                }
                if let Some(c) = rewound_confidence {
                    let fresh = engine.net.confidence(&all).unwrap();
                    assert!(
                        (c - fresh).abs() <= 1e-5 * fresh.abs().max(1.0),
                        "{name} {kv:?}: confidence {c} against {fresh}"
                    );
                }
            }
        }
    }
}
