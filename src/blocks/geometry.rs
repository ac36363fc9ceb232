//! The shape of a Needle model, once for both generations: the header fields both read alike,
//! in the units the forward pass uses, and the checks on what it divides by or indexes with.
//! What a generation adds is how its layers attend (`A`: Needle 2's one window, Needle 3's
//! local and global layers and q/k/v conv taps), in its own `geometry.rs`.
use alloc::vec::Vec;

use super::engram::EngramGeometry;
use super::kv::KvPrecision;
use crate::container::{Core, EngramFields};
use crate::{Error, Result};

/// Header geometry in the units the forward pass uses; `attention` is the generation's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry<A> {
    /// Rows of the embedding: every id below this is a valid input.
    pub vocab: usize,
    /// Rows of the tied output head: the length of a logits row (Needle 2: `vocab`).
    pub logits_vocab: usize,
    pub d_model: usize,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub num_layers: usize,
    /// Query/key and value head widths (one `head_dim` for both in Needle 2).
    pub qk_head_dim: usize,
    pub v_head_dim: usize,
    pub max_seq_len: usize,
    pub hada_n: usize,
    pub mhc_lanes: usize,
    /// KV width the model was post-trained for (8 = int8 in Needle 3, no rounding in Needle 2).
    pub kv_bits: u32,
    /// The Engram sites' shared geometry (none without sites).
    pub(crate) engram: EngramGeometry,
    /// The layer of each Engram site, in site order.
    pub engram_sites: Vec<usize>,
    pub rope_theta: f32,
    /// How the generation's layers attend.
    pub attention: A,
}

impl<A> Geometry<A> {
    /// Reads the geometry off a header's fields. The container has range-checked every field; what is
    /// checked again here is what the forward pass divides by or indexes with.
    /// A header's own fields beside its [`Core`] and `engram`: `v_head_dim`, the logits rows
    /// (`logits_vocab`) and Needle 3's Engram seed stride (`seed_heads`, 0 in Needle 2).
    pub(crate) fn from_core<const N: usize>(
        core: &Core,
        engram: &EngramFields<N>,
        (v_head_dim, logits_vocab, seed_heads): (u32, u32, u32),
        attention: A,
    ) -> Result<Self> {
        let us = |v: u32| v as usize;
        let g = Geometry {
            vocab: us(core.vocab),
            logits_vocab: us(logits_vocab),
            d_model: us(core.d_model),
            num_heads: us(core.num_heads),
            num_kv_heads: us(core.num_kv_heads),
            num_layers: us(core.num_layers),
            qk_head_dim: us(core.qk_head_dim),
            v_head_dim: us(v_head_dim),
            max_seq_len: us(core.max_seq_len),
            hada_n: us(core.hada_n),
            mhc_lanes: us(core.mhc_lanes),
            kv_bits: core.kv_bits,
            engram: EngramGeometry::from_header(engram, core.d_model, seed_heads),
            engram_sites: engram.sites().iter().map(|&s| us(s)).collect(),
            rope_theta: core.rope_theta,
            attention,
        };
        g.check(core.qk_name)?;
        Ok(g)
    }

    /// `qk_field`: the header's name of the query/key head width.
    fn check(&self, qk_field: &'static str) -> Result<()> {
        let bad = |field, value: usize, reason| {
            Err(Error::BadHeader { field, value: value as u64, reason })
        };
        if self.vocab == 0 || self.logits_vocab == 0 || self.logits_vocab > self.vocab {
            return bad("out_vocab", self.logits_vocab, "must be 1 to vocab_size");
        }
        if self.d_model == 0 || self.mhc_lanes == 0 || self.num_layers == 0 || self.num_layers > 64
        {
            return bad(
                "d_model",
                self.d_model,
                "d_model, mhc_lanes and num_layers (<= 64) must be non-zero",
            );
        }
        if self.num_kv_heads == 0 || !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return bad("num_kv_heads", self.num_kv_heads, "must divide num_heads");
        }
        if self.qk_head_dim == 0 || !self.qk_head_dim.is_multiple_of(2) || self.v_head_dim == 0 {
            return bad(qk_field, self.qk_head_dim, "head widths must be non-zero, qk even");
        }
        if self.hada_n < self.d_model || !self.hada_n.is_power_of_two() {
            return bad("hada_n", self.hada_n, "must be d_model rounded up to a power of two");
        }
        if self.max_seq_len == 0 {
            return bad("max_seq_len", 0, "must be non-zero");
        }
        self.engram.check(&self.engram_sites, self.num_layers)
    }

    /// Bytes one cached position costs in one layer: keys and values, plus, for int8, one f32
    /// scale per (position, kv head) for each of them.
    pub fn kv_bytes_per_slot(&self, kv: KvPrecision) -> usize {
        let values = self.num_kv_heads * (self.qk_head_dim + self.v_head_dim);
        kv.slot_bytes(values, self.num_kv_heads)
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::{EngramGeometry, Geometry};

    /// A geometry of the published models' family: `d_model` 768, 12 heads over `kv_heads`,
    /// 4 mHC lanes, Engram orders 2 and 3 over 6 tables of 128 with 4 conv taps.
    pub(crate) fn family<A>(
        vocab: usize,
        kv_heads: usize,
        layers: usize,
        (qk, v): (usize, usize),
        (max_seq_len, engram_slots): (usize, usize),
        engram_sites: &[usize],
        attention: A,
    ) -> Geometry<A> {
        Geometry {
            vocab,
            logits_vocab: vocab,
            d_model: 768,
            num_heads: 12,
            num_kv_heads: kv_heads,
            num_layers: layers,
            qk_head_dim: qk,
            v_head_dim: v,
            max_seq_len,
            hada_n: 1024,
            mhc_lanes: 4,
            kv_bits: 8,
            engram: EngramGeometry {
                d_model: 768,
                slots: engram_slots,
                sub_dim: 128,
                tables: 6,
                conv_taps: 4,
                conv_dilation: 3,
                seed_heads: 0,
                orders: alloc::vec![2, 3],
            },
            engram_sites: engram_sites.to_vec(),
            rope_theta: 100_000.0,
            attention,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::family;
    use super::KvPrecision;

    #[test]
    fn a_cached_position_holds_keys_and_values_and_in_int8_a_scale_for_each_per_kv_head() {
        // Needle 2's preset: 6 kv heads of one width 64; Needle 3's: 2 kv heads of 48 + 64.
        let v2 = family(8192, 6, 27, (64, 64), (2048, 8192), &[2, 15], ());
        assert_eq!(v2.kv_bytes_per_slot(KvPrecision::F32), 4 * 2 * 6 * 64);
        assert_eq!(v2.kv_bytes_per_slot(KvPrecision::Int8), 2 * 6 * 64 + 2 * 6 * 4);
        let v3 = family(16384, 2, 20, (48, 64), (4096, 18432), &[3, 7, 11, 15, 19], ());
        assert_eq!(v3.kv_bytes_per_slot(KvPrecision::F32), 4 * 2 * (48 + 64));
        assert_eq!(v3.kv_bytes_per_slot(KvPrecision::Int8), 2 * (48 + 64) + 2 * 2 * 4);
    }
}
