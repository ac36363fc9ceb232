//! The residual stack both generations run: its weights ([`Stack`], [`Layer`]), one
//! sequence's state ([`Sequence`]: KV rings, tails, the chunk scratch) and the entry point
//! [`Stack::advance`], which checks the input and runs it a chunk at a time through the forward
//! pass's stages ([`super::stages`]: embedding, then per block the mHC read, the Engram sites,
//! gated attention, the MLP and the mHC write-back; then the final norm and the tied head).
//!
//! A prompt pushed through in chunks of any size, on any number of threads, gives the same
//! bits as stepping it: every stage runs each token with the same code as a single step, and
//! `matmul_rotated` sums exactly as `matvec_rotated` does.
//!
//! What differs between the generations is plugged in: the MLP ([`Mlp`]), whether deploy
//! numerics round the mHC coefficient input, which layers run and how far each one's attention
//! reaches ([`LayerPlan`]), and the probe heads that pool the hidden cells ([`Tracked`]).
use alloc::vec;
use alloc::vec::Vec;

use super::attention::{Attention, ConvTail, Heads};
use super::engram::{EngramGeometry, Site, ValueTail};
use super::kv::{KvPrecision, KvRing};
use super::mhc::MhcLayer;
use super::persist::{mismatch, Reader, Writer};
use super::pool::{Probe, Tracked};
use super::scratch::Scratch;
use crate::kernels::CqMatrix;
use crate::{Error, Result};

/// A generation's MLP block. A chunk's tokens run it on several threads at once (each with
/// buffers of its own), hence the bounds.
pub trait Mlp: Sync {
    /// Model-wide data every layer's MLP reads (Needle 3: the two Walsh permutations).
    type Shared: Sync;
    /// Buffers of one token's forward (a sequence holds one per token of a chunk).
    type Scratch: Send;
    /// Buffers enough for every layer in `mlps`.
    fn scratch<'m>(mlps: impl Iterator<Item = &'m Self>) -> Self::Scratch
    where
        Self: 'm;
    /// `out[..d] = mlp(x)` for one token (`x` is `d` floats).
    fn forward(&self, shared: &Self::Shared, x: &[f32], s: &mut Self::Scratch, out: &mut [f32]);
    /// Multiply-adds of one token's forward, about (decides whether a chunk's tokens are worth
    /// splitting across threads).
    fn work(&self) -> usize;
}

/// One transformer block.
pub(crate) struct Layer<'a, M> {
    /// `1 + scale` of the block's three ZC RMS norms.
    pub(crate) norm_in: Vec<f32>,
    pub(crate) post_norm: Vec<f32>,
    pub(crate) pre_hada: Vec<f32>,
    pub(crate) attn: Attention<'a>,
    /// `sigmoid(attn_gate)`: how much of the attention branch joins the residual.
    pub(crate) attn_gate: f32,
    pub(crate) mlp: M,
    pub(crate) mhc: MhcLayer<'a>,
}

/// The weights of a whole stack, viewed in the container bytes.
pub(crate) struct Stack<'a, M: Mlp> {
    pub(crate) d_model: usize,
    pub(crate) lanes: usize,
    /// Rows of the embedding: every id below this is a valid input.
    pub(crate) vocab: usize,
    pub(crate) rope_theta: f32,
    pub(crate) embedding: CqMatrix<'a>,
    /// The embedding rows that form the output head.
    pub(crate) lm_head: CqMatrix<'a>,
    pub(crate) embed_scale: f32,
    pub(crate) layers: Vec<Layer<'a, M>>,
    /// Engram sites; each adds to the block of its `layer`.
    pub(crate) sites: Vec<Site<'a>>,
    pub(crate) engram: EngramGeometry,
    pub(crate) final_norm: Vec<f32>,
    pub(crate) mlp_shared: M::Shared,
    pub(crate) heads: Heads,
    /// Tokens with this id are padding to upstream's probe heads.
    pub(crate) pad_id: u32,
    /// Deploy numerics also round the mHC coefficient input to int8 (Needle 3 does, Needle 2
    /// does not).
    pub(crate) a8_mixing: bool,
}

/// How one block runs in a sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LayerPlan {
    pub(crate) layer: usize,
    /// Keys a token sees, itself included (`None` = every earlier position).
    pub(crate) window: Option<usize>,
    /// Positions its KV ring holds.
    pub(crate) slots: usize,
}

/// Everything one sequence of a [`Stack`] needs: per-layer KV rings and conv tails, Engram
/// value tails and the recent ids they hash, and the scratch of a chunk. All of it is
/// allocated once, except the KV rings and the attention scores, which grow with the sequence
/// ([`Sequence::reserve`]) up to the capacity.
pub(crate) struct Sequence<S> {
    /// The blocks run, ascending.
    pub(crate) plan: Vec<LayerPlan>,
    pub(super) rings: Vec<KvRing>,
    pub(super) conv: Vec<ConvTail>,
    /// Per Engram site of the stack (`None` when its layer is not run).
    pub(super) site_tails: Vec<Option<ValueTail>>,
    /// The last `max_order - 1` token ids, by position (the n-gram hashes reach back that far).
    pub(super) recent: Vec<u32>,
    pub(crate) pos: usize,
    /// Tokens the sequence may hold.
    pub(crate) capacity: usize,
    pub(super) s: Scratch,
    /// The MLP's buffers, one per token of a chunk.
    pub(crate) mlp: Vec<S>,
}

/// What a [`Sequence`] carries from one token to the next (its scratch aside): a copy to come
/// back to with [`Sequence::rewind`].
#[derive(Clone)]
pub(crate) struct Mark {
    rings: Vec<KvRing>,
    conv: Vec<ConvTail>,
    site_tails: Vec<Option<ValueTail>>,
    recent: Vec<u32>,
    pos: usize,
}

/// Which logits a call produces.
pub(crate) enum Logits<'o> {
    /// After the last token only.
    Last(&'o mut [f32]),
    /// After every token, row-major.
    All(&'o mut [f32]),
}

impl<'o> Logits<'o> {
    /// The logits after the last token, into `out` of exactly one row of `width`.
    pub(crate) fn last(out: &'o mut [f32], width: usize) -> Result<Self> {
        check_rows(out.len(), 1, width)?;
        Ok(Logits::Last(out))
    }

    /// The logits after each of `tokens` tokens, into `out` of exactly that many rows of `width`.
    pub(crate) fn all(out: &'o mut [f32], tokens: usize, width: usize) -> Result<Self> {
        check_rows(out.len(), tokens, width)?;
        Ok(Logits::All(out))
    }
}

fn check_rows(len: usize, rows: usize, width: usize) -> Result<()> {
    if Some(len) != rows.checked_mul(width) {
        return Err(Error::InvalidArgument {
            name: "logits",
            reason: "length must be rows x logits_len",
        });
    }
    Ok(())
}

/// Largest prefill chunk a sequence accepts.
pub(super) const MAX_CHUNK: usize = 1024;

impl<'a, M: Mlp> Stack<'a, M> {
    /// Length of one logits row.
    pub(crate) fn logits_len(&self) -> usize {
        self.lm_head.rows()
    }

    /// Floats the widest rotated input of any of the stack's CQ matrices takes (one rotation
    /// buffer serves them all, on the CPU and on the GPU).
    pub(crate) fn widest_rotation(&self) -> usize {
        let mut rot = self.lm_head.cols_padded();
        for l in &self.layers {
            let (m, a) = (&l.mhc, &l.attn);
            for cols in [m.phi_pre.cols_padded(), m.phi_post.cols_padded(), m.phi_res.cols_padded()]
            {
                rot = rot.max(cols);
            }
            let attn = [&a.q_proj, &a.k_proj, &a.v_proj, &a.gate_proj, &a.out_proj];
            for cols in attn.map(|m| m.cols_padded()) {
                rot = rot.max(cols);
            }
        }
        for s in &self.sites {
            rot = rot.max(s.key_proj.cols_padded()).max(s.value_proj.cols_padded());
        }
        rot
    }

    /// A fresh sequence running `plan` (ascending layers), `capacity` tokens at most (the
    /// caller has checked it against the model's context).
    pub(crate) fn sequence(
        &self,
        plan: Vec<LayerPlan>,
        kv: KvPrecision,
        capacity: usize,
        chunk: usize,
        deploy: bool,
    ) -> Result<Sequence<M::Scratch>> {
        if chunk == 0 || chunk > MAX_CHUNK {
            return Err(Error::InvalidArgument {
                name: "prefill_chunk",
                reason: "must be 1 to 1024",
            });
        }
        let h = &self.heads;
        let rings = plan.iter().map(|p| KvRing::new(kv, p.slots, h.kv_heads, h.qk, h.v)).collect();
        let conv = plan
            .iter()
            .map(|p| ConvTail::new(self.layers[p.layer].attn.conv_taps(h), h.qkv_width()))
            .collect();
        let site_tails = self
            .sites
            .iter()
            .map(|s| {
                plan.iter()
                    .any(|p| p.layer == s.layer)
                    .then(|| ValueTail::new(&self.engram, capacity))
            })
            .collect();
        let seq = Sequence {
            rings,
            conv,
            site_tails,
            recent: vec![0; self.engram.max_order().saturating_sub(1)],
            pos: 0,
            capacity,
            s: Scratch::new(
                &self.heads,
                self.d_model,
                self.lanes,
                &self.engram,
                self.widest_rotation(),
                chunk,
                deploy,
            ),
            mlp: (0..chunk)
                .map(|_| M::scratch(plan.iter().map(|p| &self.layers[p.layer].mlp)))
                .collect(),
            plan,
        };
        seq.check_windows()?;
        Ok(seq)
    }

    /// Runs `tokens` after what `seq` holds, writing the requested logits and showing every
    /// hidden cell to `cells`. Nothing changes when the input is refused.
    pub(crate) fn advance<H: Probe>(
        &self,
        seq: &mut Sequence<M::Scratch>,
        tokens: &[u32],
        mut logits: Logits<'_>,
        cells: &mut Tracked<'_, H>,
    ) -> Result<()> {
        self.check_tokens(seq, tokens, cells.listening())?;
        seq.reserve(seq.pos + tokens.len());
        let (b, v) = (seq.s.b, self.logits_len());
        let chunks = tokens.len().div_ceil(b);
        for (ci, chunk) in tokens.chunks(b).enumerate() {
            self.run_chunk(seq, chunk, cells);
            match &mut logits {
                Logits::All(rows) => self.final_norm_head(
                    &mut seq.s,
                    0,
                    chunk.len(),
                    &mut rows[ci * b * v..(ci * b + chunk.len()) * v],
                ),
                Logits::Last(row) if ci + 1 == chunks => {
                    self.final_norm_head(&mut seq.s, chunk.len() - 1, chunk.len(), row)
                }
                Logits::Last(_) => {}
            }
        }
        Ok(())
    }
}

impl<M: Mlp> Stack<'_, M> {
    /// Refuses `tokens` that `seq` cannot run next (`listening`: probe heads pool the cells).
    pub(crate) fn check_tokens(
        &self,
        seq: &Sequence<M::Scratch>,
        tokens: &[u32],
        listening: bool,
    ) -> Result<()> {
        if tokens.is_empty() {
            return Err(Error::InvalidArgument {
                name: "tokens",
                reason: "at least one token is needed",
            });
        }
        if let Some(&id) = tokens.iter().find(|&&t| t as usize >= self.vocab) {
            return Err(Error::TokenOutOfVocab { id, vocab: self.vocab as u32 });
        }
        // Upstream's heads mask padding out of attention and pooling alike; a pooled
        // sequence is scored as one unpadded sequence.
        if listening && tokens.contains(&self.pad_id) {
            return Err(Error::InvalidArgument {
                name: "tokens",
                reason: "padding id in a head-tracked sequence",
            });
        }
        let needed = seq.pos + tokens.len();
        if needed > seq.capacity {
            return Err(Error::ContextFull { needed, max: seq.capacity });
        }
        Ok(())
    }
}

impl<S> Sequence<S> {
    /// Records a chunk's ids for the n-gram hashes of the tokens after it.
    pub(crate) fn advance_ids(&mut self, chunk: &[u32]) {
        let r = self.recent.len();
        for (j, &id) in chunk.iter().enumerate() {
            if r > 0 {
                self.recent[(self.pos + j) % r] = id;
            }
        }
        self.pos += chunk.len();
    }

    /// Forgets the tokens (buffers are kept; stale cache entries are never read again).
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
    }

    /// Grows the KV rings (and the attention scores with them) to hold `tokens` positions,
    /// each up to its cap. Between growth steps a token allocates nothing.
    pub(crate) fn reserve(&mut self, tokens: usize) {
        let tokens = tokens.min(self.capacity);
        for ring in &mut self.rings {
            ring.reserve(tokens);
        }
        // A token attends to at most the positions its ring holds (its window fits the ring).
        self.s.attn.reserve(self.rings.iter().map(KvRing::held).max().unwrap_or(0));
    }

    /// A copy of where the sequence is.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            rings: self.rings.clone(),
            conv: self.conv.clone(),
            site_tails: self.site_tails.clone(),
            recent: self.recent.clone(),
            pos: self.pos,
        }
    }

    /// Goes back to `mark`, taken from this sequence.
    pub(crate) fn rewind(&mut self, mark: &Mark) {
        self.rings.clone_from(&mark.rings);
        self.conv.clone_from(&mark.conv);
        self.site_tails.clone_from(&mark.site_tails);
        self.recent.clone_from(&mark.recent);
        self.pos = mark.pos;
    }

    /// Writes what the sequence carries from one token to the next (what a [`Mark`] holds),
    /// its layer plan first: a state of another depth or window refuses the bytes.
    pub(crate) fn save(&self, w: &mut Writer) {
        w.u64(self.plan.len() as u64);
        for p in &self.plan {
            for x in [p.layer, p.window.map_or(0, |w| w + 1), p.slots] {
                w.u64(x as u64);
            }
        }
        w.u64(self.pos as u64);
        w.u32s(&self.recent);
        for (ring, conv) in self.rings.iter().zip(&self.conv) {
            ring.save(w, self.pos);
            conv.save(w);
        }
        for tail in self.site_tails.iter().flatten() {
            tail.save(w);
        }
    }

    /// Bytes [`Sequence::save`] writes at position `pos`: the layer plan, the position, the
    /// recent ids, the KV entries `pos` has written and the fixed-size tails.
    pub(crate) fn saved_len(&self, pos: usize) -> usize {
        let rings: usize = self
            .rings
            .iter()
            .zip(&self.conv)
            .map(|(ring, conv)| ring.saved_len(pos) + conv.bytes())
            .sum();
        let tails: usize = self.site_tails.iter().flatten().map(ValueTail::bytes).sum();
        8 + 3 * 8 * self.plan.len() + 8 + 4 * self.recent.len() + rings + tails
    }

    /// Reads what [`Sequence::save`] wrote into this (reset) sequence.
    pub(crate) fn load(&mut self, r: &mut Reader<'_>) -> Result<()> {
        if r.u64()? != self.plan.len() as u64 {
            return Err(mismatch("layer plan"));
        }
        for p in &self.plan {
            for x in [p.layer, p.window.map_or(0, |w| w + 1), p.slots] {
                if r.u64()? != x as u64 {
                    return Err(mismatch("layer plan"));
                }
            }
        }
        let pos = r.u64()?;
        if pos > self.capacity as u64 {
            return Err(Error::BadSnapshot { reason: "position past the capacity" });
        }
        self.pos = pos as usize;
        r.u32s(&mut self.recent)?;
        for (ring, conv) in self.rings.iter_mut().zip(&mut self.conv) {
            ring.load(r, self.pos)?;
            conv.load(r)?;
        }
        for tail in self.site_tails.iter_mut().flatten() {
            tail.load(r)?;
        }
        Ok(())
    }

    /// Bytes held by the KV rings (what they have grown to).
    pub(crate) fn kv_bytes(&self) -> usize {
        self.rings.iter().map(KvRing::bytes).sum()
    }

    /// Bytes held by the per-sequence state besides the KV rings: conv and Engram tails and
    /// the chunk scratch (the MLP's buffers aside: a few hada_n-wide ones per chunk token).
    pub(crate) fn scratch_bytes(&self) -> usize {
        let tails: usize = self.conv.iter().map(ConvTail::bytes).sum::<usize>()
            + self.site_tails.iter().flatten().map(ValueTail::bytes).sum::<usize>();
        tails + 4 * self.recent.len() + self.s.bytes()
    }

    /// Refuses windows the rings cannot hold: a layer whose window (or, when it sees every
    /// earlier position, the capacity) exceeds its ring would read overwritten positions.
    pub(crate) fn check_windows(&self) -> Result<()> {
        for (p, ring) in self.plan.iter().zip(&self.rings) {
            let reach = p.window.map_or(self.capacity, |w| w.min(self.capacity));
            if reach > ring.slots() {
                return Err(Error::InvalidArgument {
                    name: "window",
                    reason: "wider than the KV ring this state allocated",
                });
            }
        }
        Ok(())
    }
}
