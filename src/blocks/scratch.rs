//! The buffers one chunk of tokens runs through, row-major with one row per token, allocated
//! once per sequence for its largest chunk.
use alloc::vec;
use alloc::vec::Vec;

use super::attention::{AttnScratch, Heads};
use super::engram::EngramGeometry;
use super::project::Projector;

/// Buffers of one chunk of `b` tokens (row-major, one row per token).
pub(super) struct Scratch {
    pub(super) b: usize,
    /// Residual lanes (`lanes * d` per token).
    pub(super) stream: Vec<f32>,
    /// mHC coefficient input.
    pub(super) nx: Vec<f32>,
    /// Each token's next lanes while mixing.
    pub(super) next: Vec<f32>,
    pub(super) pre: Vec<f32>,
    pub(super) post: Vec<f32>,
    pub(super) res: Vec<f32>,
    /// The CQ projections' rotated inputs (and A8 codes in deploy numerics).
    pub(super) proj: Projector,
    /// Block input, residual, normalised residual (`d` per token).
    pub(super) u: Vec<f32>,
    pub(super) x: Vec<f32>,
    pub(super) h: Vec<f32>,
    pub(super) q: Vec<f32>,
    pub(super) k: Vec<f32>,
    pub(super) v: Vec<f32>,
    pub(super) gate: Vec<f32>,
    pub(super) o: Vec<f32>,
    /// One token's `[q | k | v]`.
    pub(super) qkv: Vec<f32>,
    /// RoPE angles of each token (`qk / 2` per token).
    pub(super) cos: Vec<f32>,
    pub(super) sin: Vec<f32>,
    pub(super) attn: AttnScratch,
    /// Each token's normalised residual, the MLP's input, and the MLP's output (`d` per token).
    pub(super) normed: Vec<f32>,
    pub(super) mlp_out: Vec<f32>,
    /// Engram: per-token table slots, memory rows, keys, values, summed contribution.
    pub(super) slots: Vec<Option<u32>>,
    pub(super) e: Vec<f32>,
    pub(super) ek: Vec<f32>,
    pub(super) ev: Vec<f32>,
    pub(super) contrib: Vec<f32>,
    pub(super) conv_out: Vec<f32>,
    pub(super) unit_x: Vec<f32>,
    pub(super) unit_k: Vec<f32>,
    /// Recent ids followed by the chunk's ids.
    pub(super) grams: Vec<u32>,
    /// Lane means (`d` per token): head cells, then the final hidden state.
    pub(super) cell: Vec<f32>,
}

impl Scratch {
    /// Buffers for `b` tokens of a stack of width `d` with `lanes` mHC lanes, attention `h`,
    /// Engram `engram`, whose widest CQ matrix takes `rot` rotated floats.
    pub(super) fn new(
        h: &Heads,
        d: usize,
        lanes: usize,
        engram: &EngramGeometry,
        rot: usize,
        b: usize,
        deploy: bool,
    ) -> Self {
        let (qd, kd, vd, od) = (h.heads * h.qk, h.kv_heads * h.qk, h.kv_heads * h.v, h.heads * h.v);
        let e_width = engram.tables * engram.sub_dim;
        Self {
            b,
            stream: vec![0.0; b * lanes * d],
            nx: vec![0.0; b * lanes * d],
            next: vec![0.0; b * lanes * d],
            pre: vec![0.0; b * lanes],
            post: vec![0.0; b * lanes],
            res: vec![0.0; b * lanes * lanes],
            proj: Projector::new(b, rot, deploy),
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
            slots: vec![None; b * engram.tables],
            e: vec![0.0; b * e_width],
            ek: vec![0.0; b * d],
            ev: vec![0.0; b * d],
            contrib: vec![0.0; b * d],
            conv_out: vec![0.0; d],
            unit_x: vec![0.0; d],
            unit_k: vec![0.0; d],
            grams: vec![0; engram.max_order().saturating_sub(1) + b],
            cell: vec![0.0; b * d],
        }
    }

    pub(super) fn bytes(&self) -> usize {
        let floats = [
            &self.stream,
            &self.nx,
            &self.next,
            &self.pre,
            &self.post,
            &self.res,
            &self.u,
            &self.x,
            &self.h,
            &self.q,
            &self.k,
            &self.v,
            &self.gate,
            &self.o,
            &self.qkv,
            &self.cos,
            &self.sin,
            &self.normed,
            &self.mlp_out,
            &self.e,
            &self.ek,
            &self.ev,
            &self.contrib,
            &self.conv_out,
            &self.unit_x,
            &self.unit_k,
            &self.cell,
        ];
        let f: usize = floats.iter().map(|v| v.len()).sum();
        let slots = self.slots.len() * core::mem::size_of::<Option<u32>>();
        4 * f + self.proj.bytes() + self.attn.bytes() + slots + 4 * self.grams.len()
    }
}
