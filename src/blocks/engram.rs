//! Engram: hashed n-gram memory added to the residual stream at a few layers (upstream's
//! `Engram` module and `engram_indices`; the gate on the block input as both generations'
//! incremental decoders apply it).
//!
//! For each order `o` and hash head `h` (one table each), the last `o` token ids are hashed to a
//! slot; the fetched rows (zero until `o` tokens exist) are concatenated into `e`, then
//!
//! ```text
//! k = key_proj · e,   v = value_proj · e                 (e int8-rounded in deploy numerics)
//! v'_t = Σ_j taps_j ⊙ v_{t - j·dilation}                 (causal dilated depthwise conv)
//! x <- x + sigmoid(rms_unit(x) · rms_unit(k) / sqrt(d)) · v'
//! ```
//!
//! Everything up to `v'` depends on the token ids alone.
use alloc::vec;
use alloc::vec::Vec;

use super::persist::{Reader, Writer};
use super::tensors::{cq, floats};
use super::{sigmoid, EPS};
use crate::container::{Codebooks, EngramFields, EngramSite};
use crate::kernels::{dot, rms_unit, CqMatrix};
use crate::{Error, Result};

const SEED: u32 = 0x9E37_79B9;
const PRIME: u32 = 0x0100_0193;

/// Engram geometry, from either generation's header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EngramGeometry {
    pub(crate) d_model: usize,
    pub(crate) slots: usize,
    pub(crate) sub_dim: usize,
    /// Tables over all orders (`orders.len() * heads`).
    pub(crate) tables: usize,
    pub(crate) conv_taps: usize,
    pub(crate) conv_dilation: usize,
    /// Seed stride between orders of the n-gram hash (the per-order table count when 0).
    pub(crate) seed_heads: usize,
    pub(crate) orders: Vec<usize>,
}

impl EngramGeometry {
    /// The geometry of a model without Engram sites: its header's Engram fields size nothing
    /// (they are neither checked nor used).
    pub(crate) fn none(d_model: usize) -> Self {
        EngramGeometry {
            d_model,
            slots: 0,
            sub_dim: 0,
            tables: 0,
            conv_taps: 0,
            conv_dilation: 0,
            seed_heads: 0,
            orders: Vec::new(),
        }
    }

    /// The Engram fields of either generation's header for a stack `d_model` wide, in the
    /// forward pass's units (none without sites); `seed_heads` is Needle 3's seed stride (0 in
    /// Needle 2, whose hashes of each order are seeded after the previous order's tables).
    pub(crate) fn from_header<const N: usize>(
        e: &EngramFields<N>,
        d_model: u32,
        seed_heads: u32,
    ) -> Self {
        let us = |v: u32| v as usize;
        if e.sites().is_empty() {
            return Self::none(us(d_model));
        }
        EngramGeometry {
            d_model: us(d_model),
            slots: us(e.slots),
            sub_dim: us(e.sub_dim),
            tables: us(e.num_tables),
            conv_taps: us(e.conv_taps),
            conv_dilation: us(e.conv_dilation),
            seed_heads: us(seed_heads),
            orders: e.orders().iter().map(|&o| us(o)).collect(),
        }
    }

    /// Refuses Engram geometry no site of a `num_layers` stack can run (`sites` may be empty:
    /// a model without Engram ignores the rest).
    pub(crate) fn check(&self, sites: &[usize], num_layers: usize) -> Result<()> {
        let bad = |field, value: usize, reason| {
            Err(Error::BadHeader { field, value: value as u64, reason })
        };
        if sites.is_empty() {
            return Ok(());
        }
        if sites.iter().any(|&s| s >= num_layers) {
            return bad("engram_layers", num_layers, "site is not a layer of the stack");
        }
        let orders = self.orders.len();
        if orders == 0 || self.orders.contains(&0) || !self.tables.is_multiple_of(orders) {
            return bad(
                "engram_orders",
                orders,
                "orders must be non-zero and divide the table count",
            );
        }
        if self.slots == 0 || self.conv_taps == 0 || self.sub_dim == 0 {
            return bad(
                "engram_slots",
                self.slots,
                "slots, conv taps and sub_dim must be non-zero",
            );
        }
        Ok(())
    }

    /// Hash heads (tables) per order.
    pub(crate) fn heads(&self) -> usize {
        self.tables.checked_div(self.orders.len()).unwrap_or(0)
    }

    /// The widest n-gram order (0 without orders).
    pub(crate) fn max_order(&self) -> usize {
        self.orders.iter().copied().max().unwrap_or(0)
    }
}

/// One site's weights.
pub(crate) struct Site<'a> {
    pub(crate) layer: usize,
    pub(crate) tables: CqMatrix<'a>,
    pub(crate) key_proj: CqMatrix<'a>,
    pub(crate) value_proj: CqMatrix<'a>,
    /// `(taps, d_model)`.
    pub(crate) taps: Vec<f32>,
}

impl<'a> Site<'a> {
    pub(crate) fn new(
        s: &EngramSite<'a>,
        layer: usize,
        g: &EngramGeometry,
        cbs: &Codebooks,
    ) -> Result<Self> {
        let width = g.tables * g.sub_dim;
        Ok(Self {
            layer,
            tables: cq(&s.tables, cbs, g.tables * g.slots, g.sub_dim)?,
            key_proj: cq(&s.key_proj, cbs, g.d_model, width)?,
            value_proj: cq(&s.value_proj, cbs, g.d_model, width)?,
            taps: floats(&s.taps, g.conv_taps * g.d_model)?,
        })
    }

    /// `e` for one token from its per-table slots (`None` = n-gram not yet complete).
    pub(crate) fn gather(&self, slots: &[Option<u32>], slots_per_table: usize, e: &mut [f32]) {
        let sub = self.tables.cols();
        for (t, (slot, out)) in slots.iter().zip(e.chunks_exact_mut(sub)).enumerate() {
            match slot {
                Some(s) => self.tables.dequant_row(t * slots_per_table + *s as usize, out),
                None => out.fill(0.0),
            }
        }
    }

    /// The dilated conv of the value at `pos` with the earlier values in `tail`; then `v`
    /// joins the tail.
    pub(crate) fn conv(&self, tail: &mut ValueTail, pos: usize, v: &[f32], out: &mut [f32]) {
        dilated_conv(&self.taps, tail, pos, v, out);
    }
}

/// `out = Σ_j taps_j ⊙ v_{pos - j·dilation}` over the taps whose position exists (`v` is the
/// value at `pos` itself, the others come from `tail`); then `v` joins the tail.
fn dilated_conv(taps: &[f32], tail: &mut ValueTail, pos: usize, v: &[f32], out: &mut [f32]) {
    let d = v.len();
    for (o, (&x, &w)) in out.iter_mut().zip(v.iter().zip(&taps[..d])) {
        *o = w * x;
    }
    for j in 1..taps.len() / d {
        let back = j * tail.dilation;
        if back > pos {
            break;
        }
        let past = tail.get(pos - back);
        for (o, (&x, &w)) in out.iter_mut().zip(past.iter().zip(&taps[j * d..(j + 1) * d])) {
            *o += w * x;
        }
    }
    tail.put(pos, v);
}

/// The gate `sigmoid(rms_unit(x) · rms_unit(k) / sqrt(d))`; `nx`, `nk` are d-float scratch.
pub(crate) fn gate(x: &[f32], k: &[f32], nx: &mut [f32], nk: &mut [f32]) -> f32 {
    rms_unit(x, EPS, nx);
    rms_unit(k, EPS, nk);
    sigmoid(dot(nx, nk) / libm::sqrtf(x.len() as f32))
}

/// Pre-conv values of the positions a site's conv still reads (a ring over positions).
#[derive(Clone)]
pub(crate) struct ValueTail {
    values: Vec<f32>,
    dilation: usize,
    d: usize,
}

impl ValueTail {
    /// A tail for a sequence of at most `capacity` tokens: the conv reaches back
    /// `(taps - 1) * dilation` positions, never before position 0, so holding more than
    /// `capacity` positions would never be read.
    pub(crate) fn new(g: &EngramGeometry, capacity: usize) -> Self {
        let len = g.conv_taps.saturating_sub(1).saturating_mul(g.conv_dilation).min(capacity);
        Self { values: vec![0.0; len * g.d_model], dilation: g.conv_dilation, d: g.d_model }
    }

    fn slots(&self) -> usize {
        self.values.len() / self.d
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * self.values.len()
    }

    pub(crate) fn save(&self, w: &mut Writer) {
        w.f32s(&self.values);
    }

    pub(crate) fn load(&mut self, r: &mut Reader<'_>) -> Result<()> {
        r.f32s(&mut self.values)
    }

    fn get(&self, pos: usize) -> &[f32] {
        let s = pos % self.slots();
        &self.values[s * self.d..(s + 1) * self.d]
    }

    fn put(&mut self, pos: usize, v: &[f32]) {
        if self.slots() > 0 {
            let s = pos % self.slots();
            self.values[s * self.d..(s + 1) * self.d].copy_from_slice(v);
        }
    }
}

/// Hash slots of every table for the token at `pos`; `token(p)` is the id at position `p`.
/// Tables run order-major: table `oi * heads + h` hashes order `orders[oi]` with head `h`.
pub(crate) fn slots(
    g: &EngramGeometry,
    pos: usize,
    token: impl Fn(usize) -> u32,
    out: &mut [Option<u32>],
) {
    let heads = g.heads();
    let stride = if g.seed_heads == 0 { heads } else { g.seed_heads };
    for (oi, &order) in g.orders.iter().enumerate() {
        for h in 0..heads {
            let mut acc = SEED.wrapping_mul((oi * stride + h + 1) as u32);
            for j in 0..order {
                let id = if j <= pos { token(pos - j) } else { 0 };
                acc = (acc ^ id).wrapping_mul(PRIME);
            }
            acc ^= acc >> 15;
            let slot = acc % g.slots as u32;
            out[oi * heads + h] = (pos + 1 >= order).then_some(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(orders: &[usize], heads: usize, seed_heads: usize, slots: usize) -> EngramGeometry {
        EngramGeometry {
            d_model: 8,
            slots,
            sub_dim: 4,
            tables: orders.len() * heads,
            conv_taps: 4,
            conv_dilation: orders.iter().copied().max().unwrap_or(0),
            seed_heads,
            orders: orders.to_vec(),
        }
    }

    #[test]
    fn slots_match_upstreams_engram_indices() {
        // upstream's engram_indices([[5, 17, 300, 2, 9]], (2, 3), heads=2, slots=61,
        // seed_heads=3) under cactus-needle 3.2.8; slots of incomplete n-grams are masked.
        let g = geometry(&[2, 3], 2, 3, 61);
        let tokens = [5u32, 17, 300, 2, 9];
        let want: [[Option<u32>; 4]; 5] = [
            [None, None, None, None],
            [Some(37), Some(42), None, None],
            [Some(12), Some(12), Some(57), Some(54)],
            [Some(60), Some(11), Some(3), Some(22)],
            [Some(3), Some(51), Some(30), Some(26)],
        ];
        for (pos, row) in want.iter().enumerate() {
            let mut got = [None; 4];
            slots(&g, pos, |p| tokens[p], &mut got);
            assert_eq!(&got, row, "position {pos}");
        }
    }

    #[test]
    fn without_a_seed_stride_orders_are_seeded_by_their_table_count_as_needle_2_does() {
        // cactus-needle 2.0.15's engram_indices([[5, 17, 300, 2, 9]], (2, 3), heads=2, slots=61).
        let g = geometry(&[2, 3], 2, 0, 61);
        let tokens = [5u32, 17, 300, 2, 9];
        let want: [[Option<u32>; 4]; 5] = [
            [None, None, None, None],
            [Some(37), Some(42), None, None],
            [Some(12), Some(12), Some(20), Some(57)],
            [Some(60), Some(11), Some(45), Some(3)],
            [Some(3), Some(51), Some(25), Some(30)],
        ];
        for (pos, row) in want.iter().enumerate() {
            let mut got = [None; 4];
            slots(&g, pos, |p| tokens[p], &mut got);
            assert_eq!(&got, row, "position {pos}");
        }
    }

    #[test]
    fn the_value_conv_reads_values_a_dilation_apart_once_they_exist() {
        let g = geometry(&[2], 1, 0, 7);
        let taps: Vec<f32> = (0..4).flat_map(|j| [10f32.powi(j); 8]).collect();
        let mut tail = ValueTail::new(&g, 100);
        let mut out = [0.0f32; 8];
        // value at position p is p+1; taps weigh p, p-2, p-4, p-6 by 1, 10, 100, 1000
        let mut seen = Vec::new();
        for pos in 0..7 {
            dilated_conv(&taps, &mut tail, pos, &[(pos + 1) as f32; 8], &mut out);
            seen.push(out[0]);
        }
        assert_eq!(seen, [1.0, 2.0, 13.0, 24.0, 135.0, 246.0, 1357.0]);
    }
}
