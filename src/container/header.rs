//! What the two header generations share: field listing for tools, and the range checks that
//! keep every later size computation meaningful.
use alloc::vec::Vec;

use super::bytes::Le;
use crate::{Error, Result};

/// Deepest stack a header may describe (v3's global-layer mask holds 64 bits; v2 uses the same
/// bound so no layer loop is sized by an unchecked field).
pub const MAX_LAYERS: u32 = 64;

/// Longest context a header may declare: 2^20 positions, 128 times the published models' 8192.
/// The KV rings grow with the sequence, so the field sizes nothing up front, but it is the
/// default session capacity: bounding it keeps every position count, and every byte count
/// computed from one, far from overflow on a 32-bit target.
pub const MAX_SEQ_LEN: u32 = 1 << 20;

/// Longest Engram n-gram order a header may declare (upstream's models use 2 and 3). The order
/// sizes the per-sequence buffer of recent ids and, as the conv dilation, the value tail.
pub const MAX_ENGRAM_ORDER: u32 = 16;

/// One header value, for listing (`needle inspect`, fixture comparisons).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Field<'h> {
    Int(u64),
    Real(f32),
    List(&'h [u32]),
    /// Bit `i` set = layer `i`; listed as the layer indices.
    LayerMask(u64),
}

pub(crate) fn bad(field: &'static str, value: u64, reason: &'static str) -> Error {
    Error::BadHeader { field, value, reason }
}

pub(crate) fn nonzero(field: &'static str, value: u32) -> Result<()> {
    if value == 0 {
        return Err(bad(field, 0, "must not be zero"));
    }
    Ok(())
}

/// Where a generation's header keeps its fields: the [`Core`] both read alike fills the words
/// from 1 on (word 0 is the tag) but the generation's own among them; then come the Engram
/// fields and, last, `rope_theta`.
pub(crate) struct Layout {
    /// Bytes of the header.
    pub(crate) len: u64,
    /// The word of each of the core's u32 fields ([`Layout::new`]).
    core: [usize; 13],
    /// The first word of the Engram sizes and of the Engram lists ([`EngramFields::read`]).
    pub(crate) engram: (usize, usize),
    pub(crate) rope: usize,
    /// The header's name of the query/key head width.
    pub(crate) qk_name: &'static str,
}

impl Layout {
    /// The core's fields fill the words from 1 on, past the generation's own words among them
    /// (`own`: Needle 3's `out_vocab` and `v_head_dim`); worked out at compile time.
    pub(crate) const fn new(
        len: u64,
        own: &[usize],
        engram: (usize, usize),
        rope: usize,
        qk_name: &'static str,
    ) -> Self {
        let mut core = [0; 13];
        let (mut i, mut word) = (0, 1);
        while i < core.len() {
            let mut j = 0;
            while j < own.len() {
                if own[j] == word {
                    word += 1;
                    j = 0;
                } else {
                    j += 1;
                }
            }
            core[i] = word;
            word += 1;
            i += 1;
        }
        Self { len, core, engram, rope, qk_name }
    }
}

/// `N` consecutive header words from word `first` (the Engram order and site arrays).
fn words<const N: usize>(le: &Le<'_>, first: usize) -> Result<[u32; N]> {
    let mut out = [0u32; N];
    for (i, w) in out.iter_mut().enumerate() {
        *w = le.u32(4 * (first + i))?;
    }
    Ok(out)
}

/// One header field for listing, with the word it sits at (listings go in header order).
pub(crate) type Listed<'h> = (usize, &'static str, Field<'h>);

/// The fields every header holds and both generations read alike: attention, stack depth,
/// Walsh size, mHC lanes. A header reads as its core (`Deref`).
#[derive(Clone, Debug, PartialEq)]
pub struct Core {
    pub num_tensors: u32,
    pub codebook_len: u32,
    /// The attention window: the one Needle 2 runs, the one Needle 3 was trained for (0 = full
    /// causal in Needle 2, sized from the KV budget in Needle 3).
    pub kv_window: u32,
    /// KV-cache width the model was post-trained for (8 = int8 in Needle 3, no KV
    /// quantisation in Needle 2).
    pub kv_bits: u32,
    pub vocab: u32,
    pub d_model: u32,
    pub num_heads: u32,
    pub num_kv_heads: u32,
    pub num_layers: u32,
    /// The query/key head width (Needle 2's one `head_dim` for queries, keys and values).
    pub qk_head_dim: u32,
    pub max_seq_len: u32,
    pub hada_n: u32,
    pub mhc_lanes: u32,
    pub rope_theta: f32,
    /// Its name in this generation's header.
    pub(crate) qk_name: &'static str,
}

/// A header struct with a `core` field reads as its [`Core`] (`h.d_model`, `h.kv_window`).
macro_rules! reads_as_core {
    ($header:ty) => {
        impl core::ops::Deref for $header {
            type Target = $crate::container::Core;

            fn deref(&self) -> &Self::Target {
                &self.core
            }
        }
    };
}
pub(crate) use reads_as_core;

/// The core's u32 fields in header order, under upstream's `read_export` names (the query/key
/// head width's is the generation's).
const CORE_NAMES: [&str; 13] = [
    "num_tensors",
    "codebook_len",
    "kv_window",
    "kv_bits",
    "vocab_size",
    "d_model",
    "num_heads",
    "num_kv_heads",
    "num_layers",
    "",
    "max_seq_len",
    "hada_n",
    "mhc_lanes",
];

impl Core {
    pub(crate) fn read(le: &Le<'_>, layout: &Layout) -> Result<Self> {
        let mut v = [0u32; 13];
        for (v, &w) in v.iter_mut().zip(&layout.core) {
            *v = le.u32(4 * w)?;
        }
        Ok(Self {
            num_tensors: v[0],
            codebook_len: v[1],
            kv_window: v[2],
            kv_bits: v[3],
            vocab: v[4],
            d_model: v[5],
            num_heads: v[6],
            num_kv_heads: v[7],
            num_layers: v[8],
            qk_head_dim: v[9],
            max_seq_len: v[10],
            hada_n: v[11],
            mhc_lanes: v[12],
            rope_theta: le.f32(4 * layout.rope)?,
            qk_name: layout.qk_name,
        })
    }

    fn values(&self) -> [u32; 13] {
        [
            self.num_tensors,
            self.codebook_len,
            self.kv_window,
            self.kv_bits,
            self.vocab,
            self.d_model,
            self.num_heads,
            self.num_kv_heads,
            self.num_layers,
            self.qk_head_dim,
            self.max_seq_len,
            self.hada_n,
            self.mhc_lanes,
        ]
    }

    /// Every core field with its word, `rope_theta` last.
    pub(crate) fn listed<'h>(&self, layout: &Layout) -> impl Iterator<Item = Listed<'h>> {
        let names = CORE_NAMES.map(|n| if n.is_empty() { layout.qk_name } else { n });
        let fields = layout.core.into_iter().zip(names).zip(self.values());
        fields.map(|((w, name), v)| (w, name, Field::Int(v.into()))).chain([(
            layout.rope,
            "rope_theta",
            Field::Real(self.rope_theta),
        )])
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.codebook_len != super::codebooks::CODEBOOK_LEN {
            return Err(bad(
                "codebook_len",
                self.codebook_len.into(),
                "must be 28 (cb2, cb3 and cb4)",
            ));
        }
        if !matches!(self.kv_bits, 2 | 3 | 4 | 8) {
            return Err(bad("kv_bits", self.kv_bits.into(), "must be 2, 3, 4 or 8"));
        }
        nonzero("vocab_size", self.vocab)?;
        nonzero("d_model", self.d_model)?;
        nonzero("num_heads", self.num_heads)?;
        nonzero("num_kv_heads", self.num_kv_heads)?;
        nonzero("max_seq_len", self.max_seq_len)?;
        if self.max_seq_len > MAX_SEQ_LEN {
            return Err(bad(
                "max_seq_len",
                self.max_seq_len.into(),
                "exceeds the 2^20 positions a runtime holds",
            ));
        }
        nonzero("mhc_lanes", self.mhc_lanes)?;
        if !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return Err(bad("num_kv_heads", self.num_kv_heads.into(), "must divide num_heads"));
        }
        if !(1..=MAX_LAYERS).contains(&self.num_layers) {
            return Err(bad("num_layers", self.num_layers.into(), "must be 1 to 64"));
        }
        // RoPE rotates the two halves of each query/key head against each other.
        let (qk, qk_field) = (self.qk_head_dim, self.qk_name);
        if qk == 0 || qk % 2 != 0 {
            return Err(bad(qk_field, qk.into(), "must be even and non-zero"));
        }
        if self.d_model.checked_next_power_of_two() != Some(self.hada_n) {
            return Err(bad(
                "hada_n",
                self.hada_n.into(),
                "must be d_model rounded up to a power of two",
            ));
        }
        if !(self.rope_theta.is_finite() && self.rope_theta > 0.0) {
            return Err(bad(
                "rope_theta",
                u64::from(self.rope_theta.to_bits()),
                "must be finite and positive",
            ));
        }
        Ok(())
    }
}

/// A header's Engram fields; `N` site slots (4 in Needle 2, 16 in Needle 3). Only the first
/// `num_orders` / `num_sites` array entries are meaningful. Upstream derives the geometry as
/// `heads = num_tables / num_orders`, `sub_dim = d_model / num_tables` (floor),
/// `dilation = max(orders)`.
#[derive(Clone, Debug, PartialEq)]
pub struct EngramFields<const N: usize> {
    pub slots: u32,
    pub sub_dim: u32,
    pub num_tables: u32,
    pub conv_taps: u32,
    pub conv_dilation: u32,
    pub num_orders: u32,
    pub orders: [u32; 4],
    pub num_sites: u32,
    pub sites: [u32; N],
}

impl<const N: usize> EngramFields<N> {
    /// Reads the fields: slots, sub_dim, tables, conv taps and dilation from word `sizes`; the
    /// order count, the 4 orders, the site count and the `N` sites from word `lists`.
    pub(crate) fn read(le: &Le<'_>, (sizes, lists): (usize, usize)) -> Result<Self> {
        let u = |i: usize| le.u32(4 * i);
        Ok(Self {
            slots: u(sizes)?,
            sub_dim: u(sizes + 1)?,
            num_tables: u(sizes + 2)?,
            conv_taps: u(sizes + 3)?,
            conv_dilation: u(sizes + 4)?,
            num_orders: u(lists)?,
            orders: words(le, lists + 1)?,
            num_sites: u(lists + 5)?,
            sites: words(le, lists + 6)?,
        })
    }

    /// Every Engram field with its word (sizes from word `sizes`, lists from word `lists`).
    pub(crate) fn listed(&self, (sizes, lists): (usize, usize)) -> [Listed<'_>; 7] {
        let int = |v: u32| Field::Int(v.into());
        [
            (sizes, "engram_slots", int(self.slots)),
            (sizes + 1, "engram_sub_dim", int(self.sub_dim)),
            (sizes + 2, "num_engram_tables", int(self.num_tables)),
            (sizes + 3, "engram_conv_taps", int(self.conv_taps)),
            (sizes + 4, "engram_conv_dilation", int(self.conv_dilation)),
            (lists + 1, "engram_orders", Field::List(self.orders())),
            (lists + 6, "engram_layers", Field::List(self.sites())),
        ]
    }

    /// The n-gram orders in use.
    pub fn orders(&self) -> &[u32] {
        &self.orders[..(self.num_orders as usize).min(4)]
    }

    /// The layers that host an Engram site, in site order.
    pub fn sites(&self) -> &[u32] {
        &self.sites[..(self.num_sites as usize).min(N)]
    }

    /// Refuses fields no stack `d_model` wide and `num_layers` deep can run.
    pub(crate) fn check(&self, d_model: u32, num_layers: u32) -> Result<()> {
        if self.num_sites as usize > N {
            return Err(bad(
                "num_engram_sites",
                self.num_sites.into(),
                "more sites than the header holds",
            ));
        }
        // The runtime sizes its recent-id buffer by the orders even without a site to use them.
        if let Some(&long) = self.orders().iter().find(|&&o| o > MAX_ENGRAM_ORDER) {
            return Err(bad("engram_orders", long.into(), "an n-gram order may be at most 16"));
        }
        if self.num_sites == 0 {
            return Ok(());
        }
        for &site in &self.sites[..self.num_sites as usize] {
            if site >= num_layers {
                return Err(bad("engram_layers", site.into(), "site is not a layer of the stack"));
            }
        }
        if self.num_orders == 0 || self.num_orders as usize > self.orders.len() {
            return Err(bad("num_engram_orders", self.num_orders.into(), "must be 1 to 4"));
        }
        let orders = &self.orders[..self.num_orders as usize];
        if let Some(&zero) = orders.iter().find(|&&o| o == 0) {
            return Err(bad("engram_orders", zero.into(), "an n-gram order must be at least 1"));
        }
        nonzero("engram_slots", self.slots)?;
        nonzero("engram_conv_taps", self.conv_taps)?;
        nonzero("num_engram_tables", self.num_tables)?;
        if !self.num_tables.is_multiple_of(self.num_orders) {
            return Err(bad(
                "num_engram_tables",
                self.num_tables.into(),
                "must be a multiple of num_engram_orders",
            ));
        }
        if self.sub_dim == 0 || self.sub_dim != d_model / self.num_tables {
            return Err(bad(
                "engram_sub_dim",
                self.sub_dim.into(),
                "must be d_model / num_engram_tables",
            ));
        }
        // The model shifts its conv taps by the longest order; a runtime reads the field.
        if Some(&self.conv_dilation) != orders.iter().max() {
            return Err(bad(
                "engram_conv_dilation",
                self.conv_dilation.into(),
                "must equal the longest engram order",
            ));
        }
        Ok(())
    }
}

/// A header's fields in header order, under upstream's `read_export` names.
pub(crate) fn listing<'h>(
    fields: impl Iterator<Item = Listed<'h>>,
) -> Vec<(&'static str, Field<'h>)> {
    let mut fields: Vec<_> = fields.collect();
    fields.sort_by_key(|&(word, ..)| word);
    fields.into_iter().map(|(_, name, field)| (name, field)).collect()
}
