//! The forward pass of the residual stack, as the named stages a chunk of tokens runs through
//! ([`Stack::run_chunk`], then [`Stack::layer_chunk`] per block; the logits come from
//! [`Stack::final_norm_head`]):
//!
//! ```text
//! embed           x0 = E[id] · sqrt(d), copied to every mHC lane
//! rope_angles     cos, sin of each position's RoPE angles
//! ngram_slots     each token's Engram table slots (hashes of the n-grams ending at it)
//! per block:
//!   mix_in          pre, post, res = Sinkhorn-routed φ · rmsnorm(stream); u = Σ_i pre_i lane_i
//!   engram          x = u + Σ_sites sigmoid(unit(u) · unit(k) / sqrt(d)) · conv(v)
//!   attention       h = out_proj(sigmoid(gate) ⊙ attend(rope(q), rope(k), v)), from rmsnorm(x)
//!   mlp_write_back  x += g · rmsnorm(h); y = x + mlp(rmsnorm(x)) - u;
//!                   lane_i = Σ_j res_ij lane_j + post_i · y
//!   probe_cells     the probe heads' cell: the mean over lanes
//! final_norm_head logits = E_head · rmsnorm(mean over lanes)
//! ```
//!
//! Each stage reads and writes the chunk's [`Scratch`]. A stage applies each CQ matrix to the
//! whole chunk at once ([`Projector`]: `a8` for upstream's int8 points in deploy numerics);
//! the rest runs token by token with the same code as a single step: in position order where a
//! token reads what earlier ones wrote (attention, the conv and Engram tails), else through
//! [`per_token`], which may split the tokens across threads. A GPU backend mirrors these
//! stages one for one.
use super::attention::ConvTail;
use super::engram::{self, ValueTail};
use super::kv::KvRing;
use super::mhc;
use super::pool::{Probe, Tracked};
#[cfg(doc)]
use super::project::Projector;
use super::scratch::Scratch;
use super::stack::{Layer, LayerPlan, Mlp, Sequence, Stack, MAX_CHUNK};
use super::EPS;
use crate::kernels::activation::mul_sigmoid;
use crate::kernels::parallel::{self, PerItem};
use crate::kernels::{rms_norm, rope, sinkhorn};

impl<M: Mlp> Stack<'_, M> {
    /// Runs one chunk through the embedding and every planned block.
    pub(super) fn run_chunk<H: Probe>(
        &self,
        seq: &mut Sequence<M::Scratch>,
        chunk: &[u32],
        cells: &mut Tracked<'_, H>,
    ) {
        let (b, p0) = (chunk.len(), seq.pos);
        self.embed(chunk, &mut seq.s, cells);
        self.rope_angles(p0, b, &mut seq.s);
        self.ngram_slots(&seq.recent, chunk, p0, &mut seq.s);
        for ai in 0..seq.plan.len() {
            self.layer_chunk(seq, ai, p0, b);
            self.probe_cells(seq.plan[ai].layer, &mut seq.s, b, cells);
        }
        seq.advance_ids(chunk);
    }

    /// Block `plan[ai]` over the chunk's `b` tokens at positions `p0..`.
    ///
    /// Never inlined: V8 runs a wasm function's optimised code only from its next call on (no
    /// on-stack replacement), and inlined into the caller this block would be part of one call
    /// per prefill, so a page's first prompt would run it all as baseline code (BENCHMARKS.md).
    #[inline(never)]
    fn layer_chunk(&self, seq: &mut Sequence<M::Scratch>, ai: usize, p0: usize, b: usize) {
        let Sequence { s, rings, conv, site_tails, plan, mlp, .. } = seq;
        let LayerPlan { layer, window, .. } = plan[ai];
        let w = &self.layers[layer];
        self.mix_in(w, ai % self.lanes, s, b);
        self.engram(layer, site_tails, s, p0, b);
        self.attention(w, window, &mut rings[ai], &mut conv[ai], s, p0, b);
        self.mlp_write_back(w, &mut mlp[..b], s, b);
    }

    /// What a GPU backend uploads for a chunk, from the same two stages: each token's RoPE
    /// angles (`cos`, `sin`) and Engram slots (ids and positions alone).
    #[cfg(feature = "gpu")]
    pub(crate) fn chunk_inputs<'s>(
        &self,
        seq: &'s mut Sequence<M::Scratch>,
        chunk: &[u32],
    ) -> (&'s [f32], &'s [f32], &'s [Option<u32>]) {
        let (b, p0, half) = (chunk.len(), seq.pos, self.heads.qk / 2);
        self.rope_angles(p0, b, &mut seq.s);
        self.ngram_slots(&seq.recent, chunk, p0, &mut seq.s);
        let s = &seq.s;
        (&s.cos[..b * half], &s.sin[..b * half], &s.slots[..b * self.engram.tables])
    }

    /// `x0 = E[id] · sqrt(d)` into every mHC lane of each token (the probe heads' cell 0).
    fn embed<H: Probe>(&self, chunk: &[u32], s: &mut Scratch, cells: &mut Tracked<'_, H>) {
        let (d, nd) = (self.d_model, self.d_model * self.lanes);
        for (j, &id) in chunk.iter().enumerate() {
            let x0 = &mut s.x[j * d..(j + 1) * d];
            self.embedding.dequant_row(id as usize, x0);
            for v in x0.iter_mut() {
                *v *= self.embed_scale;
            }
            for lane in s.stream[j * nd..(j + 1) * nd].chunks_exact_mut(d) {
                lane.copy_from_slice(x0);
            }
            if cells.listening() {
                cells.add(0, x0);
            }
        }
    }

    /// `cos`, `sin` of the RoPE angles of positions `p0..p0 + b`.
    fn rope_angles(&self, p0: usize, b: usize, s: &mut Scratch) {
        let half = self.heads.qk / 2;
        for j in 0..b {
            let (cos, sin) =
                (&mut s.cos[j * half..(j + 1) * half], &mut s.sin[j * half..(j + 1) * half]);
            rope::angles(p0 + j, self.rope_theta, cos, sin);
        }
    }

    /// Each token's Engram table slots: the hashes of the n-grams ending at it (ids alone);
    /// `recent` holds the ids before the chunk.
    fn ngram_slots(&self, recent: &[u32], chunk: &[u32], p0: usize, s: &mut Scratch) {
        if self.sites.is_empty() {
            return;
        }
        // `grams` holds the ids of positions p0 - r .. p0 + b.
        let r = recent.len();
        for i in 0..r {
            // Positions before 0 only feed slots that are masked anyway.
            s.grams[i] = recent[(p0 + i) % r];
        }
        s.grams[r..r + chunk.len()].copy_from_slice(chunk);
        let tables = self.engram.tables;
        for j in 0..chunk.len() {
            let grams = &s.grams;
            let slots = &mut s.slots[j * tables..(j + 1) * tables];
            engram::slots(&self.engram, p0 + j, |p| grams[p + r - p0], slots);
        }
    }

    /// mHC read: `pre, post, res` = the Sinkhorn-routed coefficients of `φ · rmsnorm(stream)`
    /// (`lane` is the favoured lane); the block input `u = Σ_i pre_i lane_i` starts the
    /// residual `x`.
    fn mix_in(&self, w: &Layer<'_, M>, lane: usize, s: &mut Scratch, b: usize) {
        let (d, lanes) = (self.d_model, self.lanes);
        let (nd, nn) = (lanes * d, lanes * lanes);
        for j in 0..b {
            mhc::mix_input(&s.stream[j * nd..(j + 1) * nd], &mut s.nx[j * nd..(j + 1) * nd]);
        }
        let phi = &w.mhc;
        let jobs = &mut [
            (&phi.phi_pre, &mut s.pre[..]),
            (&phi.phi_post, &mut s.post[..]),
            (&phi.phi_res, &mut s.res[..]),
        ];
        s.proj.a8_if(self.a8_mixing, &s.nx, b, jobs);
        // Sinkhorn's exponentials weigh: worth splitting by tokens.
        let stream = &s.stream;
        let rows = [
            (&mut s.pre[..], lanes),
            (&mut s.post[..], lanes),
            (&mut s.res[..], nn),
            (&mut s.u[..], d),
        ];
        per_token(b, sinkhorn::work(lanes) + nd, rows, |j, [pre, post, res, u]| {
            phi.coefficients(lane, pre, post, res);
            mhc::collapse(&stream[j * nd..(j + 1) * nd], pre, u);
        });
        s.x[..b * d].copy_from_slice(&s.u[..b * d]);
    }

    /// The Engram sites of block `layer`: `x = u + Σ_sites α · conv(v)`, where `k`, `v` are the
    /// key and value projections of the memory rows the token's n-gram slots pick and
    /// `α = sigmoid(unit(u) · unit(k) / sqrt(d))`.
    fn engram(
        &self,
        layer: usize,
        tails: &mut [Option<ValueTail>],
        s: &mut Scratch,
        p0: usize,
        b: usize,
    ) {
        let d = self.d_model;
        let mut added = false;
        for (site, tail) in self.sites.iter().zip(tails).filter(|(site, _)| site.layer == layer) {
            let Some(tail) = tail.as_mut() else { continue };
            let (tables, e_width) = (self.engram.tables, site.key_proj.cols());
            for j in 0..b {
                let e = &mut s.e[j * e_width..(j + 1) * e_width];
                site.gather(&s.slots[j * tables..(j + 1) * tables], self.engram.slots, e);
            }
            s.proj.a8(
                &s.e,
                b,
                &mut [(&site.key_proj, &mut s.ek[..]), (&site.value_proj, &mut s.ev[..])],
            );
            // In position order: the conv reads the values of earlier tokens.
            for j in 0..b {
                site.conv(tail, p0 + j, &s.ev[j * d..(j + 1) * d], &mut s.conv_out);
                let (x, k) = (&s.x[j * d..(j + 1) * d], &s.ek[j * d..(j + 1) * d]);
                let alpha = engram::gate(x, k, &mut s.unit_x, &mut s.unit_k);
                for (c, &v) in s.contrib[j * d..(j + 1) * d].iter_mut().zip(&s.conv_out) {
                    *c = if added { *c + alpha * v } else { alpha * v };
                }
            }
            added = true;
        }
        if added {
            for (x, &c) in s.x[..b * d].iter_mut().zip(&s.contrib[..b * d]) {
                *x += c;
            }
        }
    }

    /// Gated attention over the block's KV ring: `q, k, v, gate` = projections of
    /// `rmsnorm(x)`, `h = out_proj(sigmoid(gate) ⊙ attend(rope(q), rope(k), v))`.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        w: &Layer<'_, M>,
        window: Option<usize>,
        ring: &mut KvRing,
        tail: &mut ConvTail,
        s: &mut Scratch,
        p0: usize,
        b: usize,
    ) {
        let (d, h, a) = (self.d_model, &self.heads, &w.attn);
        let (qd, kd, vd, od) = (h.heads * h.qk, h.kv_heads * h.qk, h.kv_heads * h.v, h.heads * h.v);
        for j in 0..b {
            rms_norm(&s.x[j * d..(j + 1) * d], &w.norm_in, EPS, &mut s.h[j * d..(j + 1) * d]);
        }
        let jobs = &mut [
            (&a.q_proj, &mut s.q[..]),
            (&a.k_proj, &mut s.k[..]),
            (&a.v_proj, &mut s.v[..]),
            (&a.gate_proj, &mut s.gate[..]),
        ];
        s.proj.a8(&s.h, b, jobs);
        // In position order: each token attends to the keys written before it.
        let half = h.qk / 2;
        for j in 0..b {
            s.qkv[..qd].copy_from_slice(&s.q[j * qd..(j + 1) * qd]);
            s.qkv[qd..qd + kd].copy_from_slice(&s.k[j * kd..(j + 1) * kd]);
            s.qkv[qd + kd..].copy_from_slice(&s.v[j * vd..(j + 1) * vd]);
            let (cos, sin) = (&s.cos[j * half..(j + 1) * half], &s.sin[j * half..(j + 1) * half]);
            let o = &mut s.o[j * od..(j + 1) * od];
            a.token(h, window, ring, tail, p0 + j, &s.qkv, cos, sin, &mut s.attn, o);
            mul_sigmoid(o, &s.gate[j * od..(j + 1) * od]);
        }
        // out_proj lands in h (free again).
        s.proj.a8(&s.o, b, &mut [(&a.out_proj, &mut s.h[..])]);
    }

    /// The residual adds, the generation's MLP and the mHC write-back: `x += g · rmsnorm(h)`,
    /// `y = x + mlp(rmsnorm(x)) - u`, `lane_i = Σ_j res_ij lane_j + post_i · y`.
    fn mlp_write_back(&self, w: &Layer<'_, M>, mlp: &mut [M::Scratch], s: &mut Scratch, b: usize) {
        let (d, lanes) = (self.d_model, self.lanes);
        let (nd, nn) = (lanes * d, lanes * lanes);
        let Scratch { x, stream, h, u, post, res, normed, mlp_out, next, .. } = s;
        let (h, u, post, res) = (&*h, &*u, &*post, &*res);
        // The MLP, two norms and the residual adds (~8 per element), the lane mixing (lanes + 1
        // per element of the stream).
        let work = w.mlp.work() + 8 * d + (lanes + 1) * nd;
        let rows = [
            (&mut x[..], d),
            (&mut stream[..], nd),
            (&mut normed[..], d),
            (&mut mlp_out[..], d),
            (&mut next[..], nd),
        ];
        per_token_with(b, work, rows, mlp, |j, [x, stream, normed, m, next], mlp| {
            post_residual(
                &h[j * d..(j + 1) * d],
                &w.post_norm,
                w.attn_gate,
                &w.pre_hada,
                x,
                normed,
            );
            w.mlp.forward(&self.mlp_shared, normed, mlp, m);
            for ((v, &m), &u) in x.iter_mut().zip(m.iter()).zip(&u[j * d..(j + 1) * d]) {
                *v = (*v + m) - u;
            }
            let (post, res) = (&post[j * lanes..(j + 1) * lanes], &res[j * nn..(j + 1) * nn]);
            mhc::expand(stream, res, post, x, next);
        });
    }

    /// The probe heads' cell after block `layer`: each token's mean over lanes.
    fn probe_cells<H: Probe>(
        &self,
        layer: usize,
        s: &mut Scratch,
        b: usize,
        cells: &mut Tracked<'_, H>,
    ) {
        if !cells.listening() {
            return;
        }
        let (d, nd) = (self.d_model, self.d_model * self.lanes);
        for j in 0..b {
            let cell = &mut s.cell[j * d..(j + 1) * d];
            mhc::lane_mean(&s.stream[j * nd..(j + 1) * nd], cell);
            cells.add(layer + 1, cell);
        }
    }

    /// `logits = E_head · rmsnorm(mean over lanes)` of chunk rows `first..end` (already run),
    /// into `out`.
    pub(super) fn final_norm_head(
        &self,
        s: &mut Scratch,
        first: usize,
        end: usize,
        out: &mut [f32],
    ) {
        let (d, nd) = (self.d_model, self.d_model * self.lanes);
        for (i, j) in (first..end).enumerate() {
            let cell = &mut s.cell[..d];
            mhc::lane_mean(&s.stream[j * nd..(j + 1) * nd], cell);
            rms_norm(cell, &self.final_norm, EPS, &mut s.h[i * d..(i + 1) * d]);
        }
        s.proj.a8(&s.h, end - first, &mut [(&self.lm_head, out)]);
    }
}

/// Runs `f(j, rows)` for every token `j` of a chunk of `b`, where `rows[k]` is token `j`'s row
/// of `bufs[k]` (`bufs[k].1` floats a token). Tokens are split across threads when `work`
/// (multiply-adds a token) makes it worth it; each token's result is the same either way.
fn per_token<const N: usize>(
    b: usize,
    work: usize,
    bufs: [(&mut [f32], usize); N],
    f: impl Fn(usize, [&mut [f32]; N]) + Sync,
) {
    per_token_with(b, work, bufs, &mut [(); MAX_CHUNK], |j, rows, ()| f(j, rows));
}

/// [`per_token`] with one element of `items` per token besides its rows.
fn per_token_with<const N: usize, T: Send>(
    b: usize,
    work: usize,
    bufs: [(&mut [f32], usize); N],
    items: &mut [T],
    f: impl Fn(usize, [&mut [f32]; N], &mut T) + Sync,
) {
    let rows = bufs.map(|(buf, width)| PerItem(&mut buf[..b * width], width));
    parallel::items(b, work, (rows, PerItem(&mut items[..b], 1)), |tokens, (rows, items)| {
        let mut rows = rows.map(|r| r.0.chunks_exact_mut(r.1));
        for (j, item) in tokens.zip(items.0.iter_mut()) {
            f(j, rows.each_mut().map(|r| r.next().expect("one row per token")), item);
        }
    });
}

/// `x += g · rmsnorm(h)` (the attention branch joins the residual), then `normed = rmsnorm(x)`
/// (the MLP's input): one token. The GPU's `post_residual` kernel is its twin (`gpu/twins.rs`).
#[inline]
pub(crate) fn post_residual(
    h: &[f32],
    post_norm: &[f32],
    gate: f32,
    pre_hada: &[f32],
    x: &mut [f32],
    normed: &mut [f32],
) {
    rms_norm(h, post_norm, EPS, normed);
    for (v, &a) in x.iter_mut().zip(normed.iter()) {
        *v += gate * a;
    }
    rms_norm(x, pre_hada, EPS, normed);
}
