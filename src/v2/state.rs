//! Needle 2 as a generation: its options (the attention window is its own), the types it plugs
//! into the shared model and state (`blocks::state`: KV rings that grow with the sequence,
//! Engram tails, chunk scratch, the streamed head pools), and its state's switchable window.
//! [`Needle2`] is the generation they are instantiated with: this file names both ([`Model`],
//! [`State`]); `Model::new_state` (`model.rs`) makes a state.
use alloc::vec::Vec;

use super::geometry::Window;
use super::heads::ProbeHead;
use super::mlp::WalshMlp;
use crate::blocks::state::generation;
use crate::Result;

generation! {
    /// Needle 2 as the shared model and state see it. Upstream's Needle 2 keeps keys and
    /// values in f32 (its `kv_bits = 8` means no rounding); int8 KV quarters the cache at a
    /// small cost in accuracy.
    Needle2 {
        Attention = Window,
        A8_MIXING = false,
        EVERY_SITE = false,
        Mlp = WalshMlp,
        Head = ProbeHead,
    }
    /// Attention window: the keys each token sees, itself included (0 = every earlier
    /// position). The KV rings hold this many positions (or `max_tokens` when fewer or 0).
    window: usize
}

impl State {
    /// The attention window the state runs (0 = full causal).
    pub fn window(&self) -> usize {
        self.options.window
    }

    /// Whether every token so far has attended to all earlier ones, so that logits and head
    /// outputs equal upstream's full-causal ones (`generate_cached`'s and the heads' default).
    pub fn is_full_causal(&self) -> bool {
        self.options.window == 0 || self.seq.pos <= self.options.window
    }

    /// Switches the attention window (0 = full causal) and forgets the sequence. A window
    /// wider than the KV rings this state allocated is refused (`InvalidArgument`), the state
    /// unchanged.
    pub fn set_window(&mut self, window: usize) -> Result<()> {
        let old: Vec<_> = self.seq.plan.iter().map(|p| p.window).collect();
        for p in &mut self.seq.plan {
            p.window = (window != 0).then_some(window);
        }
        if let Err(e) = self.seq.check_windows() {
            for (p, w) in self.seq.plan.iter_mut().zip(old) {
                p.window = w;
            }
            return Err(e);
        }
        self.options.window = window;
        self.reset();
        Ok(())
    }

    /// Bytes of the whole per-sequence state: KV rings, Engram tails, chunk scratch, head pools.
    pub fn bytes(&self) -> usize {
        self.seq.kv_bytes()
            + self.seq.scratch_bytes()
            + 4 * self.seq.mlp.iter().map(Vec::len).sum::<usize>()
            + self.head_pool_bytes()
    }
}
