//! The residual stack both generations run, over a chunk of tokens at a time: tied embedding
//! `x0 = E[id] · sqrt(d)` broadcast to the mHC lanes; per block the lane mix, the Engram
//! site(s), gated attention and the generation's MLP, written back through the mHC
//! coefficients; then the lane mean, the final norm and the tied output head.
//!
//! Within a layer every CQ matrix is applied to the whole chunk at once (`matmul_rotated`, one
//! code decode per chunk), everything else runs token by token with the same code as a single
//! step: in position order where a token reads what earlier ones wrote (attention, the conv and
//! Engram tails), else split across threads by tokens (`kernels::parallel`). `matmul_rotated`
//! sums exactly as `matvec_rotated` does, so a prompt pushed through in chunks of any size, on
//! any number of threads, gives the same bits as stepping it.
//!
//! What differs between the generations is plugged in: the MLP ([`Mlp`]), whether deploy
//! numerics round the mHC coefficient input, which layers run and how far each one's attention
//! reaches ([`LayerPlan`]), and the probe heads that pool the hidden cells ([`Tracked`]).
use alloc::vec;
use alloc::vec::Vec;

use super::a8::A8Inputs;
use super::attention::{AttnScratch, Attention, ConvTail, Heads};
use super::engram::{self, EngramGeometry, Site, ValueTail};
use super::kv::{KvPrecision, KvRing};
use super::mhc::{self, MhcLayer};
use super::pool::{Probe, Tracked};
use super::EPS;
use crate::kernels::activation::mul_sigmoid;
use crate::kernels::parallel::{self, PerItem};
use crate::kernels::{rms_norm, rope, sinkhorn, CqMatrix};
use crate::{Error, Result};

/// A generation's MLP block. A chunk's tokens run it on several threads at once (each with
/// buffers of its own), hence the bounds.
pub(crate) trait Mlp: Sync {
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
    rings: Vec<KvRing>,
    conv: Vec<ConvTail>,
    /// Per Engram site of the stack (`None` when its layer is not run).
    site_tails: Vec<Option<ValueTail>>,
    /// The last `max_order - 1` token ids, by position (the n-gram hashes reach back that far).
    recent: Vec<u32>,
    pub(crate) pos: usize,
    /// Tokens the sequence may hold.
    capacity: usize,
    s: Scratch,
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
    /// None (the probe heads are all the caller reads).
    None,
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
        return Err(Error::InvalidArgument { name: "logits", reason: "length must be rows x logits_len" });
    }
    Ok(())
}

/// Largest prefill chunk a sequence accepts.
const MAX_CHUNK: usize = 1024;

/// Applies each matrix of `jobs` to the `b` rows of `x` (row width = the matrices' `cols`),
/// rotating the inputs once for each run of consecutive matrices that share their column
/// geometry, and applying a run's matrices together (one split across threads for all of them).
fn project(x: &[f32], b: usize, rot: &mut [f32], mut jobs: &mut [(&CqMatrix<'_>, &mut [f32])]) {
    while let Some((m, _)) = jobs.first() {
        let (cols, cp, group) = (m.cols(), m.cols_padded(), m.group());
        let run = jobs.iter().take_while(|(o, _)| (o.cols(), o.group()) == (cols, group)).count();
        // One transform per group of each input, log2(group) additions per element.
        parallel::items(b, cp * group.ilog2() as usize, PerItem(&mut rot[..b * cp], cp), |inputs, rot| {
            for (j, r) in inputs.zip(rot.0.chunks_exact_mut(cp)) {
                m.rotate_input(&x[j * cols..(j + 1) * cols], r);
            }
        });
        let (now, rest) = core::mem::take(&mut jobs).split_at_mut(run);
        CqMatrix::matmul_rotated_each(&rot[..b * cp], b, now);
        jobs = rest;
    }
}

/// [`project`], or where upstream's deploy numerics round the input to int8 first (`_aq`),
/// the A8 products of its int8 codes.
fn project_a8(a8: Option<&mut A8Inputs>, x: &[f32], b: usize, rot: &mut [f32], jobs: &mut [(&CqMatrix<'_>, &mut [f32])]) {
    match a8 {
        Some(a8) => a8.project(x, b, rot, jobs),
        None => project(x, b, rot, jobs),
    }
}

impl<'a, M: Mlp> Stack<'a, M> {
    /// Length of one logits row.
    pub(crate) fn logits_len(&self) -> usize {
        self.lm_head.rows()
    }

    /// A fresh sequence running `plan` (ascending layers), `capacity` tokens at most (the
    /// caller has checked it against the model's context).
    pub(crate) fn sequence(&self, plan: Vec<LayerPlan>, kv: KvPrecision, capacity: usize, chunk: usize, deploy: bool) -> Result<Sequence<M::Scratch>> {
        if chunk == 0 || chunk > MAX_CHUNK {
            return Err(Error::InvalidArgument { name: "prefill_chunk", reason: "must be 1 to 1024" });
        }
        let h = &self.heads;
        let rings = plan.iter().map(|p| KvRing::new(kv, p.slots, h.kv_heads, h.qk, h.v)).collect();
        let conv = plan.iter().map(|p| ConvTail::new(self.layers[p.layer].attn.conv_taps(h), h.qkv_width())).collect();
        let site_tails =
            self.sites.iter().map(|s| plan.iter().any(|p| p.layer == s.layer).then(|| ValueTail::new(&self.engram, capacity))).collect();
        let seq = Sequence {
            rings,
            conv,
            site_tails,
            recent: vec![0; self.engram.max_order().saturating_sub(1)],
            pos: 0,
            capacity,
            s: Scratch::new(self, chunk, deploy),
            mlp: (0..chunk).map(|_| M::scratch(plan.iter().map(|p| &self.layers[p.layer].mlp))).collect(),
            plan,
        };
        seq.check_windows()?;
        Ok(seq)
    }

    /// Runs `tokens` after what `seq` holds, writing the requested logits and showing every
    /// hidden cell to `cells`. Nothing changes when the input is refused.
    pub(crate) fn advance<H: Probe>(&self, seq: &mut Sequence<M::Scratch>, tokens: &[u32], mut logits: Logits<'_>, cells: &mut Tracked<'_, H>) -> Result<()> {
        if tokens.is_empty() {
            return Err(Error::InvalidArgument { name: "tokens", reason: "at least one token is needed" });
        }
        if let Some(&id) = tokens.iter().find(|&&t| t as usize >= self.vocab) {
            return Err(Error::TokenOutOfVocab { id, vocab: self.vocab as u32 });
        }
        // Upstream's heads mask padding out of attention and pooling alike; a pooled
        // sequence is scored as one unpadded sequence.
        if cells.listening() && tokens.contains(&self.pad_id) {
            return Err(Error::InvalidArgument { name: "tokens", reason: "padding id in a head-tracked sequence" });
        }
        let needed = seq.pos + tokens.len();
        if needed > seq.capacity {
            return Err(Error::ContextFull { needed, max: seq.capacity });
        }
        seq.reserve(needed);
        let (b, v) = (seq.s.b, self.logits_len());
        let chunks = tokens.len().div_ceil(b);
        for (ci, chunk) in tokens.chunks(b).enumerate() {
            self.run_chunk(seq, chunk, cells);
            match &mut logits {
                Logits::All(rows) => self.head_logits(seq, 0, chunk.len(), &mut rows[ci * b * v..(ci * b + chunk.len()) * v]),
                Logits::Last(row) if ci + 1 == chunks => self.head_logits(seq, chunk.len() - 1, chunk.len(), row),
                Logits::Last(_) | Logits::None => {}
            }
        }
        Ok(())
    }

    /// Output-head logits of chunk rows `first..end` (already run) into `out`.
    fn head_logits(&self, seq: &mut Sequence<M::Scratch>, first: usize, end: usize, out: &mut [f32]) {
        let s = &mut seq.s;
        let (d, nd) = (self.d_model, self.d_model * self.lanes);
        for (i, j) in (first..end).enumerate() {
            let cell = &mut s.cell[..d];
            mhc::lane_mean(&s.stream[j * nd..(j + 1) * nd], cell);
            let hidden = &mut s.h[i * d..(i + 1) * d];
            rms_norm(cell, &self.final_norm, EPS, hidden);
        }
        project_a8(s.a8.as_mut(), &s.h, end - first, &mut s.rot, &mut [(&self.lm_head, out)]);
    }

    /// Runs one chunk through the embedding and every planned layer.
    fn run_chunk<H: Probe>(&self, seq: &mut Sequence<M::Scratch>, chunk: &[u32], cells: &mut Tracked<'_, H>) {
        let (d, lanes, b, p0) = (self.d_model, self.lanes, chunk.len(), seq.pos);
        let nd = lanes * d;
        let listening = cells.listening();
        let (s, recent) = (&mut seq.s, &seq.recent);

        for (j, &id) in chunk.iter().enumerate() {
            let x0 = &mut s.x[j * d..(j + 1) * d];
            self.embedding.dequant_row(id as usize, x0);
            for v in x0.iter_mut() {
                *v *= self.embed_scale;
            }
            for lane in s.stream[j * nd..(j + 1) * nd].chunks_exact_mut(d) {
                lane.copy_from_slice(x0);
            }
            if listening {
                cells.add(0, x0);
            }
        }

        let half = self.heads.qk / 2;
        for j in 0..b {
            rope::angles(p0 + j, self.rope_theta, &mut s.cos[j * half..(j + 1) * half], &mut s.sin[j * half..(j + 1) * half]);
        }

        // n-gram slots of every token (they depend on the ids alone); `grams` holds the ids
        // of positions p0 - recent.len() .. p0 + b.
        let r = recent.len();
        if !self.sites.is_empty() {
            for i in 0..r {
                // Positions before 0 only feed slots that are masked anyway.
                s.grams[i] = recent[(p0 + i) % r];
            }
            s.grams[r..r + b].copy_from_slice(chunk);
            let tables = self.engram.tables;
            for j in 0..b {
                let grams = &s.grams;
                engram::slots(&self.engram, p0 + j, |p| grams[p + r - p0], &mut s.slots[j * tables..(j + 1) * tables]);
            }
        }

        for ai in 0..seq.plan.len() {
            let l = seq.plan[ai].layer;
            self.layer_chunk(seq, ai, ai % lanes, p0, b);
            if listening {
                let s = &mut seq.s;
                for j in 0..b {
                    let cell = &mut s.cell[j * d..(j + 1) * d];
                    mhc::lane_mean(&s.stream[j * nd..(j + 1) * nd], cell);
                    cells.add(l + 1, cell);
                }
            }
        }

        for (j, &id) in chunk.iter().enumerate() {
            if r > 0 {
                seq.recent[(p0 + j) % r] = id;
            }
        }
        seq.pos += b;
    }

    /// Block `plan[ai]` over the chunk's `b` tokens at positions `p0..`, `lane` its favoured
    /// mHC lane.
    ///
    /// Never inlined: V8 runs a wasm function's optimised code only from its next call on (no
    /// on-stack replacement), and inlined into the caller this block would be part of one call
    /// per prefill, so a page's first prompt would run it all as baseline code (BENCHMARKS.md).
    #[inline(never)]
    fn layer_chunk(&self, seq: &mut Sequence<M::Scratch>, ai: usize, lane: usize, p0: usize, b: usize) {
        let Sequence { s, rings, conv, site_tails, plan, mlp: mlp_scratch, .. } = seq;
        let LayerPlan { layer: l, window, .. } = plan[ai];
        let (ring, tail) = (&mut rings[ai], &mut conv[ai]);
        let w = &self.layers[l];
        let (d, lanes) = (self.d_model, self.lanes);
        let (nd, nn) = (lanes * d, lanes * lanes);
        let h = &self.heads;
        let (qd, kd, vd, od) = (h.heads * h.qk, h.kv_heads * h.qk, h.kv_heads * h.v, h.heads * h.v);

        // mHC: read the lanes into the block input u.
        for j in 0..b {
            mhc::mix_input(&s.stream[j * nd..(j + 1) * nd], &mut s.nx[j * nd..(j + 1) * nd]);
        }
        project_a8(
            s.a8.as_mut().filter(|_| self.a8_mixing),
            &s.nx,
            b,
            &mut s.rot,
            &mut [(&w.mhc.phi_pre, &mut s.pre[..]), (&w.mhc.phi_post, &mut s.post[..]), (&w.mhc.phi_res, &mut s.res[..])],
        );
        // Each token's coefficients (Sinkhorn's exponentials weigh) and block input on its own,
        // so a chunk's tokens are split across threads.
        let stream = &s.stream;
        let parts = (PerItem(&mut s.pre[..b * lanes], lanes), PerItem(&mut s.post[..b * lanes], lanes), (PerItem(&mut s.res[..b * nn], nn), PerItem(&mut s.u[..b * d], d)));
        parallel::items(b, sinkhorn::work(lanes) + nd, parts, |tokens, (pre, post, (res, u))| {
            let each = pre.0.chunks_exact_mut(lanes).zip(post.0.chunks_exact_mut(lanes)).zip(res.0.chunks_exact_mut(nn).zip(u.0.chunks_exact_mut(d)));
            for (j, ((pre, post), (res, u))) in tokens.zip(each) {
                w.mhc.coefficients(lane, pre, post, res);
                mhc::collapse(&stream[j * nd..(j + 1) * nd], pre, u);
            }
        });
        s.x[..b * d].copy_from_slice(&s.u[..b * d]);

        // Engram sites of this layer, gated by the block input.
        let mut engram_added = false;
        for (site, tail) in self.sites.iter().zip(site_tails.iter_mut()).filter(|(site, _)| site.layer == l) {
            let Some(tail) = tail.as_mut() else { continue };
            let (tables, e_width) = (self.engram.tables, site.key_proj.cols());
            for j in 0..b {
                let e = &mut s.e[j * e_width..(j + 1) * e_width];
                site.gather(&s.slots[j * tables..(j + 1) * tables], self.engram.slots, e);
            }
            project_a8(s.a8.as_mut(), &s.e, b, &mut s.rot, &mut [(&site.key_proj, &mut s.ek[..]), (&site.value_proj, &mut s.ev[..])]);
            for j in 0..b {
                site.conv(tail, p0 + j, &s.ev[j * d..(j + 1) * d], &mut s.conv_out);
                let alpha = engram::gate(&s.x[j * d..(j + 1) * d], &s.ek[j * d..(j + 1) * d], &mut s.unit_x, &mut s.unit_k);
                let contrib = &mut s.contrib[j * d..(j + 1) * d];
                for (c, &v) in contrib.iter_mut().zip(&s.conv_out) {
                    *c = if engram_added { *c + alpha * v } else { alpha * v };
                }
            }
            engram_added = true;
        }
        if engram_added {
            for (x, &c) in s.x[..b * d].iter_mut().zip(&s.contrib[..b * d]) {
                *x += c;
            }
        }

        // Attention.
        for j in 0..b {
            let hj = &mut s.h[j * d..(j + 1) * d];
            rms_norm(&s.x[j * d..(j + 1) * d], &w.norm_in, EPS, hj);
        }
        project_a8(
            s.a8.as_mut(),
            &s.h,
            b,
            &mut s.rot,
            &mut [
                (&w.attn.q_proj, &mut s.q[..]),
                (&w.attn.k_proj, &mut s.k[..]),
                (&w.attn.v_proj, &mut s.v[..]),
                (&w.attn.gate_proj, &mut s.gate[..]),
            ],
        );
        let half = h.qk / 2;
        for j in 0..b {
            s.qkv[..qd].copy_from_slice(&s.q[j * qd..(j + 1) * qd]);
            s.qkv[qd..qd + kd].copy_from_slice(&s.k[j * kd..(j + 1) * kd]);
            s.qkv[qd + kd..].copy_from_slice(&s.v[j * vd..(j + 1) * vd]);
            let (cos, sin) = (&s.cos[j * half..(j + 1) * half], &s.sin[j * half..(j + 1) * half]);
            let o = &mut s.o[j * od..(j + 1) * od];
            w.attn.token(h, window, ring, tail, p0 + j, &s.qkv, cos, sin, &mut s.attn, o);
            mul_sigmoid(o, &s.gate[j * od..(j + 1) * od]);
        }
        // out_proj lands in h (free again).
        project_a8(s.a8.as_mut(), &s.o, b, &mut s.rot, &mut [(&w.attn.out_proj, &mut s.h[..])]);

        // Residual adds, the MLP, and the mHC write-back of y = block(u) - u: each token's on its
        // own, so a chunk's tokens are split across threads.
        let Scratch { x, stream, h, u, post, res, normed, mlp_out, next, .. } = s;
        let (h, u, post, res) = (&*h, &*u, &*post, &*res);
        let parts = ((PerItem(&mut x[..b * d], d), PerItem(&mut stream[..b * nd], nd)), (PerItem(&mut normed[..b * d], d), PerItem(&mut mlp_out[..b * d], d)), (PerItem(&mut next[..b * nd], nd), PerItem(&mut mlp_scratch[..b], 1)));
        // Two norms and the residual adds (~8 per element), the lane mixing (lanes + 1 per
        // element of the stream).
        let work = w.mlp.work() + 8 * d + (lanes + 1) * nd;
        parallel::items(b, work, parts, |tokens, ((x, stream), (normed, mlp_out), (next, mlp_scratch))| {
            for (i, j) in tokens.enumerate() {
                let (x, normed, m) = (&mut x.0[i * d..(i + 1) * d], &mut normed.0[i * d..(i + 1) * d], &mut mlp_out.0[i * d..(i + 1) * d]);
                rms_norm(&h[j * d..(j + 1) * d], &w.post_norm, EPS, normed);
                for (v, &a) in x.iter_mut().zip(normed.iter()) {
                    *v += w.attn_gate * a;
                }
                rms_norm(x, &w.pre_hada, EPS, normed);
                w.mlp.forward(&self.mlp_shared, normed, &mut mlp_scratch.0[i], m);
                for ((v, &m), &u) in x.iter_mut().zip(m.iter()).zip(&u[j * d..(j + 1) * d]) {
                    *v = (*v + m) - u;
                }
                let (pre_post, res) = (&post[j * lanes..(j + 1) * lanes], &res[j * nn..(j + 1) * nn]);
                mhc::expand(&mut stream.0[i * nd..(i + 1) * nd], res, pre_post, x, &mut next.0[i * nd..(i + 1) * nd]);
            }
        });
    }
}

impl<S> Sequence<S> {
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
        Mark { rings: self.rings.clone(), conv: self.conv.clone(), site_tails: self.site_tails.clone(), recent: self.recent.clone(), pos: self.pos }
    }

    /// Goes back to `mark`, taken from this sequence.
    pub(crate) fn rewind(&mut self, mark: &Mark) {
        self.rings.clone_from(&mark.rings);
        self.conv.clone_from(&mark.conv);
        self.site_tails.clone_from(&mark.site_tails);
        self.recent.clone_from(&mark.recent);
        self.pos = mark.pos;
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
                return Err(Error::InvalidArgument { name: "window", reason: "wider than the KV ring this state allocated" });
            }
        }
        Ok(())
    }
}

/// Buffers of one chunk of `b` tokens (row-major, one row per token).
struct Scratch {
    b: usize,
    /// Residual lanes (`lanes * d` per token).
    stream: Vec<f32>,
    /// mHC coefficient input.
    nx: Vec<f32>,
    /// Each token's next lanes while mixing.
    next: Vec<f32>,
    pre: Vec<f32>,
    post: Vec<f32>,
    res: Vec<f32>,
    /// Rotated inputs of the CQ matrix being applied.
    rot: Vec<f32>,
    /// The A8 inputs' rotated codes, in deploy numerics.
    a8: Option<A8Inputs>,
    /// Block input, residual, normalised residual (`d` per token).
    u: Vec<f32>,
    x: Vec<f32>,
    h: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    gate: Vec<f32>,
    o: Vec<f32>,
    /// One token's `[q | k | v]`.
    qkv: Vec<f32>,
    /// RoPE angles of each token (`qk / 2` per token).
    cos: Vec<f32>,
    sin: Vec<f32>,
    attn: AttnScratch,
    /// Each token's normalised residual, the MLP's input, and the MLP's output (`d` per token).
    normed: Vec<f32>,
    mlp_out: Vec<f32>,
    /// Engram: per-token table slots, memory rows, keys, values, summed contribution.
    slots: Vec<Option<u32>>,
    e: Vec<f32>,
    ek: Vec<f32>,
    ev: Vec<f32>,
    contrib: Vec<f32>,
    conv_out: Vec<f32>,
    unit_x: Vec<f32>,
    unit_k: Vec<f32>,
    /// Recent ids followed by the chunk's ids.
    grams: Vec<u32>,
    /// Lane means (`d` per token): head cells, then the final hidden state.
    cell: Vec<f32>,
}

impl Scratch {
    fn new<M: Mlp>(stack: &Stack<'_, M>, b: usize, deploy: bool) -> Self {
        let h = &stack.heads;
        let (d, lanes) = (stack.d_model, stack.lanes);
        let (qd, kd, vd, od) = (h.heads * h.qk, h.kv_heads * h.qk, h.kv_heads * h.v, h.heads * h.v);
        let e_width = stack.engram.tables * stack.engram.sub_dim;
        let mut rot = stack.lm_head.cols_padded();
        for l in &stack.layers {
            let (m, a) = (&l.mhc, &l.attn);
            for cols in [m.phi_pre.cols_padded(), m.phi_post.cols_padded(), m.phi_res.cols_padded()] {
                rot = rot.max(cols);
            }
            for cols in [a.q_proj.cols_padded(), a.k_proj.cols_padded(), a.v_proj.cols_padded(), a.gate_proj.cols_padded(), a.out_proj.cols_padded()] {
                rot = rot.max(cols);
            }
        }
        for s in &stack.sites {
            rot = rot.max(s.key_proj.cols_padded()).max(s.value_proj.cols_padded());
        }
        Self {
            b,
            stream: vec![0.0; b * lanes * d],
            nx: vec![0.0; b * lanes * d],
            next: vec![0.0; b * lanes * d],
            pre: vec![0.0; b * lanes],
            post: vec![0.0; b * lanes],
            res: vec![0.0; b * lanes * lanes],
            rot: vec![0.0; b * rot],
            a8: deploy.then(|| A8Inputs::new(b, rot)),
            u: vec![0.0; b * d],
            x: vec![0.0; b * d],
            h: vec![0.0; b * d],
            q: vec![0.0; b * qd],
            k: vec![0.0; b * kd],
            v: vec![0.0; b * vd],
            gate: vec![0.0; b * od],
            o: vec![0.0; b * od],
            qkv: vec![0.0; h.qkv_width()],
            cos: vec![0.0; b * h.qk / 2],
            sin: vec![0.0; b * h.qk / 2],
            attn: AttnScratch::new(h),
            normed: vec![0.0; b * d],
            mlp_out: vec![0.0; b * d],
            slots: vec![None; b * stack.engram.tables],
            e: vec![0.0; b * e_width],
            ek: vec![0.0; b * d],
            ev: vec![0.0; b * d],
            contrib: vec![0.0; b * d],
            conv_out: vec![0.0; d],
            unit_x: vec![0.0; d],
            unit_k: vec![0.0; d],
            grams: vec![0; stack.engram.max_order().saturating_sub(1) + b],
            cell: vec![0.0; b * d],
        }
    }

    fn bytes(&self) -> usize {
        let floats = [
            &self.stream, &self.nx, &self.next, &self.pre, &self.post, &self.res, &self.rot, &self.u, &self.x, &self.h,
            &self.q, &self.k, &self.v, &self.gate, &self.o, &self.qkv, &self.cos, &self.sin, &self.normed, &self.mlp_out, &self.e,
            &self.ek, &self.ev, &self.contrib, &self.conv_out, &self.unit_x, &self.unit_k, &self.cell,
        ];
        let f: usize = floats.iter().map(|v| v.len()).sum();
        4 * f + self.a8.as_ref().map_or(0, A8Inputs::bytes) + self.attn.bytes() + self.slots.len() * core::mem::size_of::<Option<u32>>() + 4 * self.grams.len()
    }
}
