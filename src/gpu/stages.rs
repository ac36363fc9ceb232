//! The forward pass on the GPU, stage for stage as `blocks/stages.rs` runs it on the CPU (same
//! names, same order). Each stage records its dispatches once at load into the [`Program`] a
//! chunk replays in one compute pass; the CPU computes only what depends on ids and positions
//! alone (`rope_angles`, `ngram_slots`: the same CPU stages) and uploads it with the chunk.
//!
//! Activations live in regions of one buffer ([`Regions`]), what the sequence carries between
//! steps (KV rings, conv and Engram tails) in regions of another ([`Rings`]). Every ring holds
//! position `p` in slot `p % slots`; tails are read for the positions before the chunk and
//! written after the dispatches that read them; a KV ring has room for its window plus a whole
//! chunk, so a chunk's keys are written before any of its tokens attends.
use std::vec::Vec;

use super::device::{Kernel, WORKGROUP};
use super::generation::{GpuMlp, Shape};
use super::mlp::{self, MlpRegions};
use super::program::{Arena, Program, Scope, P};
use super::weights::{Cq, Weights};
use crate::blocks::attention::Heads;
use crate::blocks::stack::{LayerPlan, Mlp, Stack};
use crate::blocks::KvPrecision;
use crate::blocks::EPS;
use crate::{Error, Result};

/// Floats of the chunk header before the ids: tokens, first position, first head row.
pub(crate) const HEADER: usize = 3;
/// The shaders' NONE: a norm without a gain, a conv not adding into the residual.
const NONE: u32 = u32::MAX;

/// The activation regions (offsets in floats) of a chunk of up to `b` tokens.
#[derive(Default)]
pub(crate) struct Regions {
    pub(crate) stream: [u32; 2],
    pub(crate) pre: u32,
    pub(crate) post: u32,
    pub(crate) res: u32,
    pub(crate) u: u32,
    pub(crate) x: u32,
    pub(crate) h: u32,
    pub(crate) normed: u32,
    pub(crate) raw: u32,
    pub(crate) qkv: u32,
    pub(crate) gate: u32,
    pub(crate) o: u32,
    pub(crate) rot: u32,
    pub(crate) e: u32,
    pub(crate) ek: u32,
    pub(crate) ev: u32,
    pub(crate) alpha: u32,
    pub(crate) contrib: u32,
    pub(crate) cond: u32,
    pub(crate) z: u32,
    pub(crate) tmp: u32,
    pub(crate) mu: u32,
    pub(crate) lg: u32,
    pub(crate) cos: u32,
    pub(crate) sin: u32,
    /// Probe-head cells: row `i` (0: the embedding, `ai + 1`: after block `plan[ai]`) of token
    /// `t` at `(i * b + t) * d`.
    pub(crate) cells: u32,
    pub(crate) logits: u32,
    pub(crate) final_mean: u32,
}

/// One planned layer's ring offsets in the state buffer (in words).
struct Ring {
    slots: u32,
    keys: u32,
    values: u32,
    key_scales: u32,
    value_scales: u32,
    conv_tail: u32,
}

/// The recorded pass and the sizes of its buffers.
pub(crate) struct Recorded {
    pub(crate) program: Program,
    pub(crate) regions: Regions,
    pub(crate) act_len: usize,
    pub(crate) state_len: usize,
    /// Ids buffer length: the header, the ids, the Engram slots.
    pub(crate) ids_len: usize,
    /// Largest chunk.
    pub(crate) b: usize,
}

struct Recorder<'r, 'a, M: Mlp> {
    stack: &'r Stack<'a, M>,
    w: &'r mut Weights<'a>,
    prog: Program,
    r: Regions,
    b: usize,
    listening: bool,
    int8: bool,
}

/// Records the whole pass of `plan` for a sequence of `shape` (chunks of up to `shape.chunk`
/// tokens), with the probe heads' cells when `listening`.
pub(crate) fn record<'a, M: GpuMlp>(
    stack: &Stack<'a, M>,
    w: &mut Weights<'a>,
    plan: &[LayerPlan],
    shape: &Shape,
    listening: bool,
) -> Result<Recorded> {
    let int8 = shape.kv == KvPrecision::Int8;
    check_supported(&stack.heads, stack.lanes, int8)?;
    let b = shape.chunk;
    let (r, act_len) = regions(stack, plan.len(), b, listening);
    let mut st = Arena::default();
    let rings: Vec<Ring> =
        plan.iter().map(|p| Ring::take(&mut st, stack, p, int8, b, shape.capacity)).collect();
    let tails = SiteTails::take(&mut st, stack, plan, shape.capacity);
    let mut rec = Recorder { stack, w, prog: Program::default(), r, b, listening, int8 };
    rec.pass(plan, &rings, &tails)?;
    Ok(Recorded {
        program: rec.prog,
        regions: rec.r,
        act_len,
        state_len: st.len,
        ids_len: HEADER + b + b * stack.engram.tables,
        b,
    })
}

/// Refuses the shapes the kernels do not hold: `attend` keeps q's codes for 256 channels and
/// mixes 4 value channels a lane; int8 KV packs 4 codes a word.
fn check_supported(h: &Heads, lanes: usize, int8: bool) -> Result<()> {
    if lanes * lanes > 64 || h.qk > 256 || h.v > 256 || !h.qk.is_multiple_of(2) {
        return Err(Error::Unsupported {
            what: "GPU backend: more than 8 mHC lanes, or head widths over 256",
        });
    }
    if int8 && (!h.qk.is_multiple_of(4) || !h.v.is_multiple_of(4)) {
        return Err(Error::Unsupported { what: "GPU int8 KV needs head widths divisible by 4" });
    }
    Ok(())
}

/// The activation regions of a chunk of up to `b` tokens over `blocks` planned blocks, and the
/// floats they take.
fn regions<M: GpuMlp>(
    stack: &Stack<'_, M>,
    blocks: usize,
    b: usize,
    listening: bool,
) -> (Regions, usize) {
    let h = &stack.heads;
    let (d, lanes) = (stack.d_model, stack.lanes);
    let (nd, width, od) = (lanes * d, h.qkv_width(), h.heads * h.v);
    let n = stack.layers.first().map_or(0, |l| l.mlp.hadamard().d1.len());
    let rank = stack.layers.iter().map(|l| l.mlp.hadamard().rank).max().unwrap_or(0);
    let e_width = stack.sites.first().map_or(0, |s| s.key_proj.cols());
    let mut a = Arena::default();
    let r = Regions {
        stream: [a.take(b * nd), a.take(b * nd)],
        pre: a.take(b * lanes),
        post: a.take(b * lanes),
        res: a.take(b * lanes * lanes),
        u: a.take(b * d),
        x: a.take(b * d),
        h: a.take(b * d),
        normed: a.take(b * d),
        raw: a.take(b * width),
        qkv: a.take(b * width),
        gate: a.take(b * od),
        o: a.take(b * od),
        rot: a.take(b * stack.widest_rotation()),
        e: a.take(b * e_width),
        ek: a.take(b * d),
        ev: a.take(b * d),
        alpha: a.take(b),
        contrib: a.take(b * d),
        cond: a.take(b * n),
        z: a.take(b * n),
        tmp: a.take(b * n),
        mu: a.take(b * n),
        lg: a.take(b * rank.max(1)),
        cos: a.take(b * h.qk / 2),
        sin: a.take(b * h.qk / 2),
        cells: a.take(if listening { (blocks + 1) * b * d } else { 0 }),
        logits: a.take(b * stack.logits_len()),
        final_mean: a.take(b * d),
    };
    (r, a.len)
}

impl Ring {
    /// The ring of planned block `p` in the state arena: its window plus a whole chunk of `b`
    /// (at most `capacity`), int8 codes four to a word with a scale per entry.
    fn take<M: GpuMlp>(
        st: &mut Arena,
        stack: &Stack<'_, M>,
        p: &LayerPlan,
        int8: bool,
        b: usize,
        capacity: usize,
    ) -> Self {
        let h = &stack.heads;
        let slots = (p.slots + b).min(capacity).max(1);
        let (kw, vw) = if int8 { (h.qk / 4, h.v / 4) } else { (h.qk, h.v) };
        let entries = slots * h.kv_heads;
        let taps = stack.layers[p.layer].attn.conv_taps(h);
        Ring {
            slots: slots as u32,
            keys: st.take(entries * kw),
            values: st.take(entries * vw),
            key_scales: st.take(if int8 { entries } else { 0 }),
            value_scales: st.take(if int8 { entries } else { 0 }),
            conv_tail: st.take(taps.saturating_sub(1) * h.qkv_width()),
        }
    }
}

/// The Engram sites' value tails in the state arena: the positions their dilated conv reaches
/// back (`slots`), per site whose block runs (`None` otherwise).
struct SiteTails {
    at: Vec<Option<u32>>,
    slots: usize,
}

impl SiteTails {
    fn take<M: GpuMlp>(
        st: &mut Arena,
        stack: &Stack<'_, M>,
        plan: &[LayerPlan],
        capacity: usize,
    ) -> Self {
        let g = &stack.engram;
        let slots = g.conv_taps.saturating_sub(1).saturating_mul(g.conv_dilation).min(capacity);
        let at = stack
            .sites
            .iter()
            .map(|s| {
                plan.iter().any(|p| p.layer == s.layer).then(|| st.take(slots * stack.d_model))
            })
            .collect();
        Self { at, slots }
    }
}

/// Where a projection lands: the matrix, its output region and row stride.
type Job<'m, 'a> = (&'m crate::kernels::CqMatrix<'a>, u32, usize);

impl<'a, M: GpuMlp> Recorder<'_, 'a, M> {
    fn u(v: usize) -> P {
        P::U(v as u32)
    }

    /// The stages in order, as `blocks/stages.rs` runs them: embed; per planned block mix_in,
    /// engram, attention, mlp_write_back (and the probe heads' cell); final_norm_head.
    fn pass(&mut self, plan: &[LayerPlan], rings: &[Ring], tails: &SiteTails) -> Result<()> {
        self.embed()?;
        for (ai, p) in plan.iter().enumerate() {
            let (cur, next) = (self.r.stream[ai % 2], self.r.stream[(ai + 1) % 2]);
            self.mix_in(p.layer, ai % self.stack.lanes, cur)?;
            self.engram(p.layer, tails)?;
            self.attention(p, &rings[ai])?;
            self.mlp_write_back(p.layer, cur, next)?;
            self.probe_cells(ai, next);
        }
        self.final_norm_head(self.r.stream[plan.len() % 2])
    }

    /// `x0 = E[id] · sqrt(d)` into every lane (and the probe heads' cell 0).
    fn embed(&mut self) -> Result<()> {
        let s = self.stack;
        let d = s.d_model;
        let e = self.w.cq(&s.embedding)?;
        self.gather(&e, HEADER as u32, 1, 0, self.r.x, d, s.embed_scale);
        for lane in 0..s.lanes {
            let dst = self.r.stream[0] + (lane * d) as u32;
            self.copy(self.r.x, d, d, dst, s.lanes * d);
        }
        if self.listening {
            self.copy(self.r.x, d, d, self.r.cells, d);
        }
        Ok(())
    }

    /// mHC read of block `layer` from the lanes at `cur`: coefficients, then `u` (and `x`).
    fn mix_in(&mut self, layer: usize, lane: usize, cur: u32) -> Result<()> {
        let s = self.stack;
        let (d, n) = (s.d_model, s.lanes);
        let phi = &s.layers[layer].mhc;
        let (pre, post, res) = (self.r.pre, self.r.post, self.r.res);
        self.project_normed(
            cur,
            n * d,
            Some(NONE),
            &[(&phi.phi_pre, pre, n), (&phi.phi_post, post, n), (&phi.phi_res, res, n * n)],
            Scope::Chunk,
        )?;
        let bp = self.w.floats(&phi.b_pre);
        let bq = self.w.floats(&phi.b_post);
        let br = self.w.floats(&phi.b_res);
        let u = Self::u;
        self.prog.push(
            Kernel::Coefficients,
            1,
            Scope::Chunk,
            &[
                pre.into(),
                post.into(),
                res.into(),
                u(n),
                u(lane),
                phi.a_pre.into(),
                phi.a_post.into(),
                phi.a_res.into(),
                bp.into(),
                bq.into(),
                br.into(),
            ],
        );
        let p = [cur.into(), pre.into(), u(n), u(d), self.r.u.into(), self.r.x.into()];
        self.prog.push(Kernel::Collapse, d, Scope::Chunk, &p);
        Ok(())
    }

    /// The Engram sites of block `layer`: `x += Σ_sites α · conv(v)`, the last site's conv
    /// adding the sum into `x`.
    fn engram(&mut self, layer: usize, tails: &SiteTails) -> Result<()> {
        let s = self.stack;
        let (d, g, tail_slots) = (s.d_model, &s.engram, tails.slots);
        let sites: Vec<_> = s
            .sites
            .iter()
            .zip(&tails.at)
            .filter_map(|(site, tail)| Some((site, (*tail)?)).filter(|_| site.layer == layer))
            .collect();
        for (i, &(site, tail)) in sites.iter().enumerate() {
            let tables = self.w.cq(&site.tables)?;
            let e_width = site.key_proj.cols();
            let slots_at = (HEADER + self.b) as u32;
            self.gather_tables(&tables, slots_at, g.tables, g.slots, e_width);
            let (ek, ev) = (self.r.ek, self.r.ev);
            self.project(
                self.r.e,
                e_width,
                &[(&site.key_proj, ek, d), (&site.value_proj, ev, d)],
                Scope::Chunk,
            )?;
            let u = Self::u;
            let p = [self.r.x.into(), ek.into(), u(d), self.r.alpha.into(), EPS.into()];
            self.prog.push(Kernel::EngramGate, 1, Scope::Chunk, &p);
            let taps = self.w.floats(&site.taps);
            let last = i + 1 == sites.len();
            self.prog.push(
                Kernel::EngramConv,
                d,
                Scope::Chunk,
                &[
                    ev.into(),
                    u(d),
                    taps.into(),
                    u(g.conv_taps),
                    u(g.conv_dilation),
                    tail.into(),
                    u(tail_slots.max(1)),
                    self.r.alpha.into(),
                    self.r.contrib.into(),
                    u(usize::from(i == 0)),
                    if last { self.r.x } else { NONE }.into(),
                ],
            );
            if tail_slots > 0 {
                self.tail_write(ev, d, d, tail, tail_slots);
            }
        }
        Ok(())
    }

    /// Gated attention of block `p.layer` over its ring.
    fn attention(&mut self, p: &LayerPlan, ring: &Ring) -> Result<()> {
        let s = self.stack;
        let (d, h) = (s.d_model, &s.heads);
        let a = &s.layers[p.layer].attn;
        let (qd, kd, od, width) = (h.heads * h.qk, h.kv_heads * h.qk, h.heads * h.v, h.qkv_width());
        let norm_in = self.w.floats(&s.layers[p.layer].norm_in);
        let taps = a.conv_taps(h);
        let dst = if taps > 0 { self.r.raw } else { self.r.qkv };
        self.project_normed(
            self.r.x,
            d,
            Some(norm_in),
            &[
                (&a.q_proj, dst, width),
                (&a.k_proj, dst + qd as u32, width),
                (&a.v_proj, dst + (qd + kd) as u32, width),
                (&a.gate_proj, self.r.gate, od),
            ],
            Scope::Chunk,
        )?;
        let u = Self::u;
        let window = p.window.unwrap_or(0);
        if taps > 0 {
            let t = self.w.floats(&a.taps);
            self.prog.push(
                Kernel::QkvConv,
                width,
                Scope::Chunk,
                &[
                    self.r.raw.into(),
                    u(width),
                    t.into(),
                    u(taps),
                    u(window),
                    ring.conv_tail.into(),
                    u((taps - 1).max(1)),
                    self.r.qkv.into(),
                ],
            );
            if taps > 1 {
                self.tail_write(self.r.raw, width, width, ring.conv_tail, taps - 1);
            }
        }
        let (qg, kg) = (self.w.floats(&a.q_gain), self.w.floats(&a.k_gain));
        self.prog.push(
            Kernel::QkNormRope,
            h.heads + h.kv_heads,
            Scope::Chunk,
            &[
                self.r.qkv.into(),
                u(width),
                u(h.qk),
                u(h.heads),
                u(h.kv_heads),
                qg.into(),
                kg.into(),
                self.r.cos.into(),
                self.r.sin.into(),
                EPS.into(),
            ],
        );
        let ring_params = [
            self.r.qkv.into(),
            u(width),
            u(h.qk),
            u(h.v),
            u(h.heads),
            u(h.kv_heads),
            ring.slots.into(),
            ring.keys.into(),
            ring.values.into(),
            ring.key_scales.into(),
            ring.value_scales.into(),
            u(usize::from(self.int8)),
        ];
        self.prog.push(Kernel::KvWrite, h.kv_heads, Scope::Chunk, &ring_params);
        let mut attend = ring_params.to_vec();
        attend.extend_from_slice(&[
            u(window),
            h.q_factor.into(),
            h.score_factor.into(),
            self.r.o.into(),
            self.r.gate.into(),
        ]);
        // A workgroup per (token, head) (`attend` in attention.wgsl).
        self.prog.push(Kernel::Attend, h.heads * WORKGROUP as usize, Scope::Chunk, &attend);
        self.project(self.r.o, od, &[(&a.out_proj, self.r.h, d)], Scope::Chunk)
    }

    /// `x += g · rmsnorm(h)`, `y = x + mlp(rmsnorm(x)) - u`, then the lanes at `cur` mixed
    /// with `y` into `next`.
    fn mlp_write_back(&mut self, layer: usize, cur: u32, next: u32) -> Result<()> {
        let s = self.stack;
        let (d, lanes) = (s.d_model, s.lanes);
        let l = &s.layers[layer];
        let u = Self::u;
        let (pn, ph) = (self.w.floats(&l.post_norm), self.w.floats(&l.pre_hada));
        let r = &self.r;
        let p = [
            r.h.into(),
            r.x.into(),
            r.normed.into(),
            u(d),
            pn.into(),
            ph.into(),
            l.attn_gate.into(),
            EPS.into(),
        ];
        self.prog.push(Kernel::PostResidual, 1, Scope::Chunk, &p);
        let at = MlpRegions {
            normed: r.normed,
            x: r.x,
            u: r.u,
            cond: r.cond,
            z: r.z,
            tmp: r.tmp,
            mu: r.mu,
            lg: r.lg,
            d,
        };
        let perms = M::permutations(&s.mlp_shared);
        mlp::record(&mut self.prog, self.w, &l.mlp.hadamard(), perms, &at);
        let r = &self.r;
        let p = [cur.into(), r.res.into(), r.post.into(), r.x.into(), next.into(), u(lanes), u(d)];
        self.prog.push(Kernel::Expand, lanes * d, Scope::Chunk, &p);
        Ok(())
    }

    /// The probe heads' cell after block `plan[ai]`: the lane mean, into cell row `ai + 1`.
    fn probe_cells(&mut self, ai: usize, stream: u32) {
        if !self.listening {
            return;
        }
        let s = self.stack;
        let d = s.d_model;
        let dst = self.r.cells + ((ai + 1) * self.b * d) as u32;
        let p = [stream.into(), Self::u(s.lanes), Self::u(d), dst.into(), Self::u(d)];
        self.prog.push(Kernel::LaneMean, d, Scope::Chunk, &p);
    }

    /// `logits = E_head · rmsnorm(mean over lanes)` of the rows read back.
    fn final_norm_head(&mut self, stream: u32) -> Result<()> {
        let s = self.stack;
        let d = s.d_model;
        let mean = self.r.final_mean;
        let p = [stream.into(), Self::u(s.lanes), Self::u(d), mean.into(), Self::u(d)];
        self.prog.push_shifted(Kernel::LaneMean, d, Scope::Head, true, &p);
        let gain = self.w.floats(&s.final_norm);
        let v = s.logits_len();
        self.project_normed(mean, d, Some(gain), &[(&s.lm_head, self.r.logits, v)], Scope::Head)
    }

    fn copy(&mut self, src: u32, stride: usize, width: usize, dst: u32, dst_stride: usize) {
        let u = Self::u;
        let p = [src.into(), u(stride), u(width), dst.into(), u(dst_stride)];
        self.prog.push(Kernel::CopyRows, width, Scope::Chunk, &p);
    }

    fn tail_write(&mut self, src: u32, stride: usize, width: usize, ring: u32, slots: usize) {
        let u = Self::u;
        let p = [src.into(), u(stride), u(width), ring.into(), u(slots)];
        self.prog.push(Kernel::TailWrite, width, Scope::Chunk, &p);
    }

    /// Embedding rows (one table, the ids as slots) scaled by `times`.
    #[allow(clippy::too_many_arguments)]
    fn gather(
        &mut self,
        m: &Cq,
        slots_at: u32,
        tables: usize,
        per_table: usize,
        dst: u32,
        stride: usize,
        times: f32,
    ) {
        let u = Self::u;
        let mut p: Vec<P> = m.words[..6].iter().map(|&w| P::U(w)).collect();
        p.extend_from_slice(&[
            u(m.cols),
            slots_at.into(),
            u(tables),
            u(per_table),
            dst.into(),
            u(stride),
            m.words[7].into(),
            crate::kernels::hadamard::orthonormal_scale(m.group).into(),
            times.into(),
        ]);
        self.prog.push(Kernel::GatherRows, tables * m.cols_padded / m.group, Scope::Chunk, &p);
    }

    /// The Engram memory rows of every table into `e`.
    fn gather_tables(
        &mut self,
        m: &Cq,
        slots_at: u32,
        tables: usize,
        per_table: usize,
        e_width: usize,
    ) {
        self.gather(m, slots_at, tables, per_table, self.r.e, e_width, 1.0);
    }

    /// Each job's matrix applied to the rows of `src`, one rotation per run of matrices that
    /// share their column geometry (as `blocks/project.rs`).
    fn project(&mut self, src: u32, cols: usize, jobs: &[Job<'_, 'a>], scope: Scope) -> Result<()> {
        self.project_normed(src, cols, None, jobs, scope)
    }

    /// [`Self::project`] of the rows of `src` RMS-normed first, with the float gain at `norm`
    /// (`NONE`: none): the norm runs inside each rotation, its rows never written.
    fn project_normed(
        &mut self,
        src: u32,
        cols: usize,
        norm: Option<u32>,
        jobs: &[Job<'_, 'a>],
        scope: Scope,
    ) -> Result<()> {
        let u = Self::u;
        let mut rest = jobs;
        while let Some((m, _, _)) = rest.first() {
            let run = rest
                .iter()
                .take_while(|(o, _, _)| (o.cols(), o.group()) == (m.cols(), m.group()))
                .count();
            let (cp, g) = (m.cols_padded(), m.group());
            if m.cols() != cols {
                return Err(Error::Unsupported { what: "GPU projection input width" });
            }
            let scale = crate::kernels::hadamard::orthonormal_scale(g);
            let p = [
                src.into(),
                u(cols),
                u(cols),
                u(cp),
                u(g),
                self.r.rot.into(),
                scale.into(),
                u(usize::from(norm.is_some())),
                norm.unwrap_or(NONE).into(),
                EPS.into(),
            ];
            self.prog.push(Kernel::Rotate, cp / g, scope, &p);
            for (m, out, stride) in &rest[..run] {
                let c = self.w.cq(m)?;
                super::variant::check_rows(c.rows)?;
                let mut p: Vec<P> = c.words.iter().map(|&w| P::U(w)).collect();
                p.extend_from_slice(&[self.r.rot.into(), (*out).into(), u(*stride)]);
                self.prog.push(Kernel::Matmul, c.rows, scope, &p);
            }
            rest = &rest[run..];
        }
        Ok(())
    }
}
