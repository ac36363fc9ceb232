//! Gated grouped-query attention of one block (upstream's `MultiHeadAttention`, the same in
//! both generations), for one token whose q/k/v projections are already computed (the caller
//! batches the projections).
//!
//! ```text
//! q, k, v  = causal depthwise conv over the last `taps` projections (Needle 3 layers with taps)
//! q, k     = zero-centred RMS norm per head (q_norm, k_norm), then RoPE at the position
//! q, k, v  = per-head int8 round trip (int8 KV: the cache stores codes + scale)
//! o_h      = softmax_s(q_h · k_s / sqrt(qk)) · v_s     over the causal (windowed) keys
//! ```
//!
//! Upstream runs this through `jax.nn.dot_product_attention` with heads padded to
//! `max(qk, v)`: the query is multiplied by `sqrt(max/qk)` and the scores by `1/sqrt(max)`,
//! both rounded to f32; the same two factors are used here (the first is 1 when qk == v).
use alloc::vec;
use alloc::vec::Vec;

use super::kv::{KvRing, ROWS};
use super::persist::{Reader, Writer};
use super::tensors::{cq, floats, gain};
use super::EPS;
use crate::container::{Codebooks, TensorView};
use crate::kernels::parallel::{self, PerItem};
use crate::kernels::{inv_rms, rope, softmax, CqMatrix};
use crate::Result;

/// One block's attention tensors, as the container lays them out.
pub(crate) struct AttnTensors<'v, 'a> {
    pub(crate) q_proj: &'v TensorView<'a>,
    pub(crate) k_proj: &'v TensorView<'a>,
    pub(crate) v_proj: &'v TensorView<'a>,
    pub(crate) gate_proj: &'v TensorView<'a>,
    pub(crate) out_proj: &'v TensorView<'a>,
    pub(crate) q_norm: &'v TensorView<'a>,
    pub(crate) k_norm: &'v TensorView<'a>,
    /// Conv taps on q, k and v with their tap count (Needle 3 layers that carry them).
    pub(crate) conv: Option<(usize, [&'v TensorView<'a>; 3])>,
}

/// One block's attention weights.
pub(crate) struct Attention<'a> {
    pub(crate) q_proj: CqMatrix<'a>,
    pub(crate) k_proj: CqMatrix<'a>,
    pub(crate) v_proj: CqMatrix<'a>,
    pub(crate) gate_proj: CqMatrix<'a>,
    pub(crate) out_proj: CqMatrix<'a>,
    /// Conv taps as rows of `[q | k | v]` width, `taps` rows (empty without conv).
    pub(crate) taps: Vec<f32>,
    /// `1 + scale` of the per-head q and k norms.
    pub(crate) q_gain: Vec<f32>,
    pub(crate) k_gain: Vec<f32>,
}

/// Head layout and the fused-attention factors, shared by every layer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Heads {
    pub(crate) heads: usize,
    pub(crate) kv_heads: usize,
    pub(crate) qk: usize,
    pub(crate) v: usize,
    /// Query multiplier `sqrt(max(qk, v) / qk)` and score multiplier `1 / sqrt(max(qk, v))`.
    pub(crate) q_factor: f32,
    pub(crate) score_factor: f32,
}

impl Heads {
    pub(crate) fn new(heads: usize, kv_heads: usize, qk: usize, v: usize) -> Self {
        let fused = qk.max(v) as f64;
        Self {
            heads,
            kv_heads,
            qk,
            v,
            q_factor: libm::sqrt(fused / qk as f64) as f32,
            score_factor: (1.0 / libm::sqrt(fused)) as f32,
        }
    }

    /// Query heads attended together (they share a kv head, so each key and value row is read
    /// once for all of them): the heads of one kv head, or a divisor of that count of at most
    /// [`ROWS`].
    pub(crate) fn pass(&self) -> usize {
        let group = self.heads / self.kv_heads;
        (1..=group.min(ROWS)).rev().find(|p| group.is_multiple_of(*p)).unwrap_or(1)
    }

    /// Width of the concatenated `[q | k | v]` projections.
    pub(crate) fn qkv_width(&self) -> usize {
        (self.heads + self.kv_heads) * self.qk + self.kv_heads * self.v
    }
}

/// Buffers of one token's attention (part of the session state). Each head has scores and an
/// int8 query of its own, so passes of heads can run on different threads (`kernels::parallel`).
pub(crate) struct AttnScratch {
    qkv: Vec<f32>,
    /// A row of scores per query head, as many per row as the keys [`Self::reserve`] made room for.
    scores: Vec<f32>,
    q8: Vec<i8>,
    heads: usize,
}

impl AttnScratch {
    /// Scratch for no keys yet ([`Self::reserve`] grows it with the KV rings).
    pub(crate) fn new(h: &Heads) -> Self {
        Self {
            qkv: vec![0.0; h.qkv_width()],
            scores: Vec::new(),
            q8: vec![0; h.heads * h.qk],
            heads: h.heads,
        }
    }

    /// Room for the scores of `keys` positions.
    pub(crate) fn reserve(&mut self, keys: usize) {
        let len = keys * self.heads;
        if len > self.scores.len() {
            self.scores.reserve_exact(len - self.scores.len());
            self.scores.resize(len, 0.0);
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * (self.qkv.len() + self.scores.len()) + self.q8.len()
    }
}

impl<'a> Attention<'a> {
    pub(crate) fn new(
        t: &AttnTensors<'_, 'a>,
        h: &Heads,
        d: usize,
        cbs: &Codebooks,
    ) -> Result<Self> {
        let (qd, kd, vd) = (h.heads * h.qk, h.kv_heads * h.qk, h.kv_heads * h.v);
        let taps = match &t.conv {
            Some((n, [qt, kt, vt])) if *n > 0 => {
                let n = *n;
                let (qt, kt, vt) = (floats(qt, n * qd)?, floats(kt, n * kd)?, floats(vt, n * vd)?);
                let mut rows = Vec::with_capacity(n * (qd + kd + vd));
                for j in 0..n {
                    rows.extend_from_slice(&qt[j * qd..(j + 1) * qd]);
                    rows.extend_from_slice(&kt[j * kd..(j + 1) * kd]);
                    rows.extend_from_slice(&vt[j * vd..(j + 1) * vd]);
                }
                rows
            }
            _ => Vec::new(),
        };
        Ok(Self {
            q_proj: cq(t.q_proj, cbs, qd, d)?,
            k_proj: cq(t.k_proj, cbs, kd, d)?,
            v_proj: cq(t.v_proj, cbs, vd, d)?,
            gate_proj: cq(t.gate_proj, cbs, h.heads * h.v, d)?,
            out_proj: cq(t.out_proj, cbs, d, h.heads * h.v)?,
            taps,
            q_gain: gain(t.q_norm, h.qk)?,
            k_gain: gain(t.k_norm, h.qk)?,
        })
    }

    /// Taps of the causal conv on q, k and v (0 = none).
    pub(crate) fn conv_taps(&self, h: &Heads) -> usize {
        self.taps.len() / h.qkv_width()
    }

    /// Attention output (all heads, `heads * v` floats) of the token at `pos`, whose raw
    /// `[q | k | v]` projections are `raw` and whose RoPE angles are `cos`, `sin`; keys at most
    /// `window` positions back (itself included; `None` = all). Records the token in `tail`
    /// and `ring`; the ring's precision decides whether q, k and v are int8-rounded.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn token(
        &self,
        h: &Heads,
        window: Option<usize>,
        ring: &mut KvRing,
        tail: &mut ConvTail,
        pos: usize,
        raw: &[f32],
        cos: &[f32],
        sin: &[f32],
        s: &mut AttnScratch,
        out: &mut [f32],
    ) {
        let width = raw.len();
        if self.taps.is_empty() {
            s.qkv.copy_from_slice(raw);
        } else {
            // Tap j reads position pos - j, if it exists and is inside the window.
            let taps = self.taps.len() / width;
            for (o, (&x, &w)) in s.qkv.iter_mut().zip(raw.iter().zip(&self.taps[..width])) {
                *o = w * x;
            }
            for j in 1..taps {
                if j > pos || window.is_some_and(|w| j >= w) {
                    break;
                }
                let past = tail.get(pos - j);
                for (o, (&x, &w)) in
                    s.qkv.iter_mut().zip(past.iter().zip(&self.taps[j * width..(j + 1) * width]))
                {
                    *o += w * x;
                }
            }
            tail.put(pos, raw);
        }

        let (qd, kd) = (h.heads * h.qk, h.kv_heads * h.qk);
        let (q, kv) = s.qkv.split_at_mut(qd);
        let (k, v) = kv.split_at_mut(kd);
        for head in q.chunks_exact_mut(h.qk) {
            zc_norm_in_place(head, &self.q_gain);
            rope::apply(head, cos, sin);
        }
        for head in k.chunks_exact_mut(h.qk) {
            zc_norm_in_place(head, &self.k_gain);
            rope::apply(head, cos, sin);
        }
        ring.write(pos, k, v);

        let first = match window {
            Some(w) => (pos + 1).saturating_sub(w),
            None => 0,
        };
        let (group, pass, keys, ring) = (h.heads / h.kv_heads, h.pass(), pos + 1 - first, &*ring);
        out.fill(0.0);
        // A pass (query heads sharing a kv head) is the unit of parallel work.
        let parts = (
            PerItem(q, pass * h.qk),
            PerItem(&mut out[..h.heads * h.v], pass * h.v),
            (
                PerItem(&mut s.scores[..h.heads * keys], pass * keys),
                PerItem(&mut s.q8, pass * h.qk),
            ),
        );
        // Per head: a dot product and a weighted sum per key, and an exponential (~8 multiply-adds).
        parallel::items(
            h.heads / pass,
            pass * keys * (h.qk + h.v + 8),
            parts,
            |passes, (q, out, (scores, q8))| {
                let each =
                    q.0.chunks_exact_mut(pass * h.qk).zip(out.0.chunks_exact_mut(pass * h.v)).zip(
                        scores
                            .0
                            .chunks_exact_mut(pass * keys)
                            .zip(q8.0.chunks_exact_mut(pass * h.qk)),
                    );
                for (pi, ((qp, op), (scores, q8))) in passes.zip(each) {
                    let kv_head = pi * pass / group;
                    ring.scores(qp, q8, kv_head, first, h.q_factor, h.score_factor, scores);
                    for row in scores.chunks_exact_mut(keys) {
                        softmax(row);
                    }
                    ring.mix(scores, kv_head, first, op);
                }
            },
        );
    }
}

/// Upstream's `ZCRMSNorm` over one head, in place: `(gain ⊙ x) / rms(x)`.
fn zc_norm_in_place(x: &mut [f32], gain: &[f32]) {
    let inv = inv_rms(x, EPS);
    for (v, &g) in x.iter_mut().zip(gain) {
        *v = (g * *v) * inv;
    }
}

/// The raw (pre-conv) q, k, v projections of the positions the causal conv still reads.
#[derive(Clone)]
pub(crate) struct ConvTail {
    rows: Vec<f32>,
    width: usize,
}

impl ConvTail {
    /// A tail for a conv of `taps` taps over rows of `width` floats (q, k and v side by side).
    pub(crate) fn new(taps: usize, width: usize) -> Self {
        Self { rows: vec![0.0; taps.saturating_sub(1) * width], width }
    }

    fn slots(&self) -> usize {
        self.rows.len() / self.width
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * self.rows.len()
    }

    pub(crate) fn save(&self, w: &mut Writer) {
        w.f32s(&self.rows);
    }

    pub(crate) fn load(&mut self, r: &mut Reader<'_>) -> Result<()> {
        r.f32s(&mut self.rows)
    }

    /// The row of position `pos` (one of the last `taps - 1`).
    pub(crate) fn get(&self, pos: usize) -> &[f32] {
        let s = pos % self.slots();
        &self.rows[s * self.width..(s + 1) * self.width]
    }

    /// Records the row of position `pos`, evicting the oldest.
    pub(crate) fn put(&mut self, pos: usize, row: &[f32]) {
        if self.slots() > 0 {
            let s = pos % self.slots();
            self.rows[s * self.width..(s + 1) * self.width].copy_from_slice(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conv_tail_remembers_the_last_taps_minus_one_rows() {
        let mut tail = ConvTail::new(3, 2);
        for pos in 0..4 {
            tail.put(pos, &[pos as f32, 1.0]);
        }
        assert_eq!(tail.get(3), [3.0, 1.0]);
        assert_eq!(tail.get(2), [2.0, 1.0]);
    }

    #[test]
    fn equal_head_widths_leave_the_query_unscaled() {
        let h = Heads::new(4, 2, 32, 32);
        assert_eq!(h.q_factor, 1.0);
        assert_eq!(h.score_factor, (1.0 / libm::sqrt(32.0)) as f32);
        assert_eq!(h.qkv_width(), (4 + 2) * 32 + 2 * 32);
    }
}
