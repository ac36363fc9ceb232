//! The per-layer KV ring of one sequence.
//!
//! The ring holds up to `slots` positions, position `p` in slot `p % slots`. A layer that sees
//! the whole context gets one slot per position of the session, so it never wraps; a windowed
//! layer gets its window, and the position a write evicts is exactly the one that just left the
//! window. Storage grows with the sequence ([`KvRing::reserve`], outside the per-token path)
//! up to `slots`: a short session pays for the positions it uses. Growth only ever happens
//! before the first wrap (slot = position there), so it never moves an entry. Int8 entries follow Needle 3's `a8_fake_quant_kv`: per (position, kv head) symmetric
//! codes and one f32 scale, dequantised inside the attention dot products.
use alloc::vec::Vec;

use super::persist::{Reader, Writer};
use crate::kernels::{axpy, axpy_i8_keys, dot, dot_i8_i8_rows, quantize_i8};
use crate::Result;

/// How the KV cache stores keys and values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvPrecision {
    /// Plain f32.
    F32,
    /// Per (position, kv head) symmetric int8 codes with one f32 scale, as Needle 3's
    /// `a8_fake_quant_kv`; the query is int8-rounded per head too (`maybe_quant_query`).
    Int8,
}

impl KvPrecision {
    /// Bytes one cached position costs in one layer holding `values` key and value numbers
    /// over `kv_heads` heads: f32 each, or int8 each plus one f32 scale per head for the keys
    /// and another for the values.
    pub(crate) fn slot_bytes(self, values: usize, kv_heads: usize) -> usize {
        match self {
            KvPrecision::F32 => values * 4,
            KvPrecision::Int8 => values + 2 * kv_heads * 4,
        }
    }
}

#[derive(Clone)]
enum Store {
    F32 { k: Vec<f32>, v: Vec<f32> },
    Int8 { k: Vec<i8>, v: Vec<i8>, k_scale: Vec<f32>, v_scale: Vec<f32> },
}

/// Most query heads one call of [`KvRing::scores`] or [`KvRing::mix`] serves.
pub(crate) const ROWS: usize = 16;

#[derive(Clone)]
pub(crate) struct KvRing {
    store: Store,
    /// Positions the ring holds once grown (its cap).
    slots: usize,
    /// Positions the storage holds now (at most `slots`).
    held: usize,
    kv_heads: usize,
    qk: usize,
    v: usize,
}

impl KvRing {
    /// An empty ring that can grow to `slots` positions.
    pub(crate) fn new(kv: KvPrecision, slots: usize, kv_heads: usize, qk: usize, v: usize) -> Self {
        let store = match kv {
            KvPrecision::F32 => Store::F32 { k: Vec::new(), v: Vec::new() },
            KvPrecision::Int8 => Store::Int8 {
                k: Vec::new(),
                v: Vec::new(),
                k_scale: Vec::new(),
                v_scale: Vec::new(),
            },
        };
        Self { store, slots, held: 0, kv_heads, qk, v }
    }

    /// Positions the ring holds once grown.
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Positions the storage holds now.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Grows the storage so that positions `0..positions` can be written (never past `slots`).
    /// A ring grows to at least twice what it held, so a sequence that grows one token at a
    /// time reallocates O(log n) times; a batch (a prompt) gets exactly what it needs.
    pub(crate) fn reserve(&mut self, positions: usize) {
        let want = positions.min(self.slots);
        if want <= self.held {
            return;
        }
        let n = want.max(2 * self.held).min(self.slots);
        let (kn, vn, sn) =
            (n * self.kv_heads * self.qk, n * self.kv_heads * self.v, n * self.kv_heads);
        match &mut self.store {
            Store::F32 { k, v } => {
                grow(k, kn, 0.0);
                grow(v, vn, 0.0);
            }
            Store::Int8 { k, v, k_scale, v_scale } => {
                grow(k, kn, 0);
                grow(v, vn, 0);
                grow(k_scale, sn, 0.0);
                grow(v_scale, sn, 0.0);
            }
        }
        self.held = n;
    }

    /// Bytes held by the cache entries (the storage's allocation, not just what is written).
    pub(crate) fn bytes(&self) -> usize {
        match &self.store {
            Store::F32 { k, v } => 4 * (k.capacity() + v.capacity()),
            Store::Int8 { k, v, k_scale, v_scale } => {
                k.capacity() + v.capacity() + 4 * (k_scale.capacity() + v_scale.capacity())
            }
        }
    }

    /// Writes the entries of the positions a sequence at `pos` has written (every slot once
    /// the ring wrapped).
    pub(crate) fn save(&self, w: &mut Writer, pos: usize) {
        let n = pos.min(self.slots) * self.kv_heads;
        match &self.store {
            Store::F32 { k, v } => {
                w.f32s(&k[..n * self.qk]);
                w.f32s(&v[..n * self.v]);
            }
            Store::Int8 { k, v, k_scale, v_scale } => {
                w.i8s(&k[..n * self.qk]);
                w.i8s(&v[..n * self.v]);
                w.f32s(&k_scale[..n]);
                w.f32s(&v_scale[..n]);
            }
        }
    }

    /// Bytes [`KvRing::save`] writes for a sequence at `pos`.
    pub(crate) fn saved_len(&self, pos: usize) -> usize {
        let n = pos.min(self.slots) * self.kv_heads;
        match &self.store {
            Store::F32 { .. } => 4 * n * (self.qk + self.v),
            Store::Int8 { .. } => n * (self.qk + self.v + 2 * 4),
        }
    }

    /// Reads what [`KvRing::save`] wrote for a sequence at `pos` (the caller checked `pos`
    /// against the capacity, so the growth is bounded by the model).
    pub(crate) fn load(&mut self, r: &mut Reader<'_>, pos: usize) -> Result<()> {
        self.reserve(pos);
        let n = pos.min(self.slots) * self.kv_heads;
        match &mut self.store {
            Store::F32 { k, v } => {
                r.f32s(&mut k[..n * self.qk])?;
                r.f32s(&mut v[..n * self.v])
            }
            Store::Int8 { k, v, k_scale, v_scale } => {
                r.i8s(&mut k[..n * self.qk])?;
                r.i8s(&mut v[..n * self.v])?;
                r.f32s(&mut k_scale[..n])?;
                r.f32s(&mut v_scale[..n])
            }
        }
    }

    /// Entry indices (slot * kv_heads + h) of kv head `h` at positions `first..first + n`
    /// (n <= slots), walking the ring without a division per position.
    fn entries(
        &self,
        first: usize,
        n: usize,
        h: usize,
    ) -> impl Iterator<Item = usize> + Clone + '_ {
        let s0 = first % self.slots;
        (s0..self.slots).chain(0..s0).take(n).map(move |s| s * self.kv_heads + h)
    }

    /// Stores the keys and values (all kv heads, head-major) of position `pos`.
    pub(crate) fn write(&mut self, pos: usize, k: &[f32], v: &[f32]) {
        let s = pos % self.slots;
        debug_assert!(s < self.held, "position {pos} written before the ring was reserved for it");
        let (kw, vw) = (self.kv_heads * self.qk, self.kv_heads * self.v);
        match &mut self.store {
            Store::F32 { k: ks, v: vs } => {
                ks[s * kw..(s + 1) * kw].copy_from_slice(k);
                vs[s * vw..(s + 1) * vw].copy_from_slice(v);
            }
            Store::Int8 { k: ks, v: vs, k_scale, v_scale } => {
                for h in 0..self.kv_heads {
                    let (ko, vo) = (s * kw + h * self.qk, s * vw + h * self.v);
                    k_scale[s * self.kv_heads + h] =
                        quantize_i8(&k[h * self.qk..(h + 1) * self.qk], &mut ks[ko..ko + self.qk]);
                    v_scale[s * self.kv_heads + h] =
                        quantize_i8(&v[h * self.v..(h + 1) * self.v], &mut vs[vo..vo + self.v]);
                }
            }
        }
    }

    /// Attention scores of the query heads in `q` (rows of `qk`; `ROWS` at most) against kv
    /// head `h` at positions `first..` (`out` holds one row of scores per query head, one per
    /// position, all still in the ring): `(q · sqrt_f) · k_p · score_f` with `q_factor` and
    /// `score_factor` as the fused attention applies them. Against an int8 ring each query head
    /// is int8-rounded first (into `q8`, as many rows), as upstream's `maybe_quant_query` does,
    /// and the dot products run on the integer codes, each key row read once for every head.
    /// `q` is clobbered.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scores(
        &self,
        q: &mut [f32],
        q8: &mut [i8],
        h: usize,
        first: usize,
        q_factor: f32,
        score_factor: f32,
        out: &mut [f32],
    ) {
        let d = self.qk;
        let rows = q.len() / d;
        assert!(
            rows <= ROWS && out.len().is_multiple_of(rows.max(1)),
            "scores: at most ROWS query heads, one score row each"
        );
        let n = out.len() / rows.max(1);
        match &self.store {
            Store::F32 { k, .. } => {
                for x in q.iter_mut() {
                    *x *= q_factor;
                }
                for (qh, sc) in q.chunks_exact(d).zip(out.chunks_exact_mut(n)) {
                    for (sc, r) in sc.iter_mut().zip(self.entries(first, n, h)) {
                        *sc = dot(qh, &k[r * d..(r + 1) * d]) * score_factor;
                    }
                }
            }
            Store::Int8 { k, k_scale, .. } => {
                let q8 = &mut q8[..rows * d];
                let mut q_scale = [0.0f32; ROWS];
                for ((qh, q8h), qs) in
                    q.chunks_exact(d).zip(q8.chunks_exact_mut(d)).zip(&mut q_scale)
                {
                    *qs = quantize_i8(qh, q8h) * q_factor;
                }
                let mut dots = [0i32; ROWS];
                for (i, r) in self.entries(first, n, h).enumerate() {
                    dot_i8_i8_rows(q8, &k[r * d..(r + 1) * d], &mut dots[..rows]);
                    for (g, (&dp, &qs)) in dots[..rows].iter().zip(&q_scale).enumerate() {
                        out[g * n + i] = dp as f32 * qs * k_scale[r] * score_factor;
                    }
                }
            }
        }
    }

    /// `out_g += Σ_i w_g[i] · v_{first + i}` over kv head `h` for each query head `g` (`w` and
    /// `out` hold one row per head, `ROWS` at most), values dequantised as upstream's fake-quant
    /// forms them, each value row read once for every head.
    pub(crate) fn mix(&self, w: &[f32], h: usize, first: usize, out: &mut [f32]) {
        let d = self.v;
        let rows = out.len() / d;
        assert!(
            rows <= ROWS && w.len().is_multiple_of(rows.max(1)),
            "mix: at most ROWS heads, one weight row each"
        );
        let n = w.len() / rows.max(1);
        match &self.store {
            Store::F32 { v, .. } => {
                for (wg, og) in w.chunks_exact(n).zip(out.chunks_exact_mut(d)) {
                    for (&wi, r) in wg.iter().zip(self.entries(first, n, h)) {
                        axpy(wi, &v[r * d..(r + 1) * d], og);
                    }
                }
            }
            Store::Int8 { v, v_scale, .. } => {
                let keys = self.entries(first, n, h).map(|r| (&v[r * d..(r + 1) * d], v_scale[r]));
                axpy_i8_keys(&w[..rows * n], n, keys, out);
            }
        }
    }
}

/// Grows `buf` to exactly `len` entries (no spare capacity: the ring decides how far it grows).
fn grow<T: Copy>(buf: &mut Vec<T>, len: usize, zero: T) {
    buf.reserve_exact(len - buf.len());
    buf.resize(len, zero);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_wraps_onto_the_position_that_left_the_window() {
        let mut ring = KvRing::new(KvPrecision::F32, 3, 1, 2, 1);
        ring.reserve(5);
        for pos in 0..5 {
            ring.write(pos, &[pos as f32, 0.5], &[-(pos as f32)]);
        }
        // positions 2, 3, 4 remain: scores against q = (1, 2) are p + 1, values -p
        let mut scores = [0.0f32; 3];
        ring.scores(&mut [1.0, 2.0], &mut [0; 2], 0, 2, 1.0, 1.0, &mut scores);
        assert_eq!(scores, [3.0, 4.0, 5.0]);
        let mut out = [0.0f32];
        ring.mix(&[1.0, 10.0, 100.0], 0, 2, &mut out);
        assert_eq!(out, [-(2.0 + 30.0 + 400.0)]);
    }

    #[test]
    fn int8_entries_keep_codes_and_one_scale_per_position_and_head() {
        let mut ring = KvRing::new(KvPrecision::Int8, 2, 2, 2, 2);
        ring.reserve(2);
        ring.write(1, &[1.27, -0.5, 0.0, 0.0], &[2.54, 1.0, -3.81, 0.0]);
        let Store::Int8 { k, v, k_scale, v_scale } = &ring.store else {
            panic!("not an int8 ring")
        };
        assert_eq!(&k[4..8], [127, -50, 0, 0]);
        assert_eq!(&k_scale[2..4], [1.27f32 * (1.0 / 127.0), 1.0]);
        assert_eq!(&v[4..8], [127, 50, -127, 0]);
        assert_eq!(&v_scale[2..4], [2.54f32 * (1.0 / 127.0), 3.81f32 * (1.0 / 127.0)]);
        assert_eq!(ring.bytes(), 2 * 2 * 2 * 2 + 4 * 2 * 2 * 2);
    }

    #[test]
    fn int8_scores_round_the_query_and_use_integer_dot_products() {
        let mut ring = KvRing::new(KvPrecision::Int8, 1, 1, 2, 1);
        ring.reserve(1);
        ring.write(0, &[1.27, -0.5], &[2.0]);
        let mut scores = [0.0f32];
        // q = (2.54, 1.0): codes (127, 50), scale 0.02; key codes (127, -50), scale 0.01
        ring.scores(&mut [2.54, 1.0], &mut [0; 2], 0, 0, 3.0, 0.5, &mut scores);
        let want = (127 * 127 - 50 * 50) as f32
            * (2.54f32 * (1.0 / 127.0) * 3.0)
            * (1.27f32 * (1.0 / 127.0))
            * 0.5;
        assert_eq!(scores, [want]);
        let mut out = [0.0f32];
        ring.mix(&[0.5], 0, 0, &mut out);
        assert_eq!(out, [0.5 * (127.0 * (2.0f32 * (1.0 / 127.0)))]);
    }

    #[test]
    fn a_ring_grows_with_the_sequence_to_its_cap_and_keeps_what_it_holds() {
        for kv in [KvPrecision::F32, KvPrecision::Int8] {
            let mut ring = KvRing::new(kv, 10, 1, 2, 1);
            assert_eq!((ring.held(), ring.bytes()), (0, 0));
            // a batch gets exactly what it needs
            ring.reserve(3);
            assert_eq!(ring.held(), 3);
            let per_slot = ring.bytes() / 3;
            assert_eq!(per_slot, kv.slot_bytes(3, 1));
            for pos in 0..3 {
                ring.write(pos, &[pos as f32, 1.0], &[pos as f32]);
            }
            // one more position doubles, then growth stops at the cap
            ring.reserve(4);
            assert_eq!(ring.held(), 6);
            ring.reserve(7);
            assert_eq!(ring.held(), 10);
            ring.reserve(1000);
            assert_eq!((ring.held(), ring.bytes()), (10, 10 * per_slot));
            let mut out = [0.0f32];
            ring.mix(&[1.0, 1.0, 1.0], 0, 0, &mut out);
            assert!(
                (out[0] - 3.0).abs() < 0.05,
                "{kv:?}: entries written before growth were kept ({})",
                out[0]
            );
        }
    }
}
