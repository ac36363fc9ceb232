//! The recorded forward pass: every dispatch a chunk runs, in order, each with its own parameter
//! slot. The stages ([`super::stages`]) record it once at load; a chunk replays it into one
//! compute pass, so a step costs one command buffer and one readback.
use std::vec::Vec;

use super::device::{Kernel, SLOT_BYTES, WORKGROUP};

/// Which tokens of the chunk a dispatch runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every token of the chunk.
    Chunk,
    /// The rows whose logits are read back (the final norm and head).
    Head,
}

/// One recorded dispatch: `per_token` invocations for each token of its scope.
pub(crate) struct Dispatch {
    pub(crate) kernel: Kernel,
    pub(crate) slot: u32,
    pub(crate) per_token: u32,
    pub(crate) scope: Scope,
}

/// Parameter word 60: run over the head's rows; 61: read the stream from the head's first row.
const SCOPE_WORD: usize = 60;
const SHIFT_WORD: usize = 61;
pub(crate) const WORDS: usize = (SLOT_BYTES / 4) as usize;

#[derive(Default)]
pub(crate) struct Program {
    pub(crate) dispatches: Vec<Dispatch>,
    /// One slot of `WORDS` words per dispatch.
    pub(crate) params: Vec<u32>,
}

/// A parameter: a word, or an f32 passed as its bits.
#[derive(Clone, Copy)]
pub(crate) enum P {
    U(u32),
    F(f32),
}

impl From<u32> for P {
    fn from(v: u32) -> Self {
        P::U(v)
    }
}

impl From<f32> for P {
    fn from(v: f32) -> Self {
        P::F(v)
    }
}

impl Program {
    /// Records `kernel` over `per_token` invocations a token with parameters `params` (words
    /// 0.. in order).
    pub(crate) fn push(&mut self, kernel: Kernel, per_token: usize, scope: Scope, params: &[P]) {
        self.push_shifted(kernel, per_token, scope, false, params)
    }

    /// [`Self::push`]; `shift` makes the kernel read the stream from the head's first row.
    pub(crate) fn push_shifted(
        &mut self,
        kernel: Kernel,
        per_token: usize,
        scope: Scope,
        shift: bool,
        params: &[P],
    ) {
        assert!(params.len() < SCOPE_WORD, "a kernel takes at most 60 parameters");
        let mut slot = [0u32; WORDS];
        for (w, p) in slot.iter_mut().zip(params) {
            *w = match *p {
                P::U(v) => v,
                P::F(v) => v.to_bits(),
            };
        }
        slot[SCOPE_WORD] = u32::from(scope == Scope::Head);
        slot[SHIFT_WORD] = u32::from(shift);
        let index = self.dispatches.len() as u32;
        self.params.extend_from_slice(&slot);
        self.dispatches.push(Dispatch { kernel, slot: index, per_token: per_token as u32, scope });
    }

    /// Dispatches one step records (those of the head only when it runs).
    pub(crate) fn count(&self, head: bool) -> usize {
        self.dispatches.iter().filter(|d| head || d.scope == Scope::Chunk).count()
    }
}

/// Workgroups for `n` invocations: up to 65535 along x, the rest along y.
pub(crate) fn workgroups(n: u32) -> (u32, u32) {
    let groups = n.div_ceil(WORKGROUP).max(1);
    if groups <= 65535 {
        (groups, 1)
    } else {
        (65535, groups.div_ceil(65535))
    }
}

/// Hands out regions of one buffer (in 4-byte elements).
#[derive(Default)]
pub(crate) struct Arena {
    pub(crate) len: usize,
}

impl Arena {
    /// A region of `n` elements; its offset.
    pub(crate) fn take(&mut self, n: usize) -> u32 {
        let at = self.len;
        self.len += n;
        at as u32
    }
}
