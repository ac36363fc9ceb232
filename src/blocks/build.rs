//! How a [`Model`] is built from a container of either generation: the views both canons name
//! alike (embedding, mHC, per block the norms, attention and gate, Engram sites, final norm)
//! become the shared [`Stack`] here; a generation brings what is its own (each block's MLP and
//! conv taps, which Engram sites run, its probe heads, the MLP's shared data), in its
//! `model.rs`.
use alloc::vec::Vec;

use super::attention::{Attention, AttnTensors, Heads};
use super::engram::Site;
use super::geometry::Geometry;
use super::mhc;
use super::model::Model;
use super::sigmoid;
use super::stack::{Layer, Mlp, Stack};
use super::state::Generation;
use super::tensors::{cq, floats, gain};
use crate::container::{Codebooks, EngramSite, MhcTensors, TensorView};
use crate::{Error, Result};

/// The views of a whole container both canons hold under the same names.
pub(crate) struct Views<'c, 'a> {
    pub(crate) codebooks: &'c Codebooks,
    pub(crate) embedding: &'c TensorView<'a>,
    pub(crate) mhc: &'c MhcTensors<'a>,
    pub(crate) final_norm: &'c TensorView<'a>,
    /// The tokenizer's padding id.
    pub(crate) pad: u32,
    /// Records of the blocks (checked against the header's layer count).
    pub(crate) blocks: usize,
    pub(crate) sites: &'c [EngramSite<'a>],
}

/// The views of one block both canons hold under the same names.
pub(crate) struct BlockViews<'c, 'a> {
    pub(crate) norm_in: &'c TensorView<'a>,
    pub(crate) post_norm: &'c TensorView<'a>,
    pub(crate) pre_hada: &'c TensorView<'a>,
    pub(crate) attn_gate: &'c TensorView<'a>,
    pub(crate) attn: AttnTensors<'c, 'a>,
}

/// [`Views`] of a `V2Container` or a `V3Container`, which name these fields alike.
macro_rules! views {
    ($c:expr) => {
        $crate::blocks::build::Views {
            codebooks: &$c.codebooks,
            embedding: &$c.embedding,
            mhc: &$c.mhc,
            final_norm: &$c.final_norm,
            pad: $c.tokenizer_summary.pad,
            blocks: $c.layers.len(),
            sites: &$c.engram,
        }
    };
}
pub(crate) use views;

/// [`BlockViews`] of a `V2Layer` or a `V3Layer`, with the block's q/k/v conv taps (`conv`).
macro_rules! block_views {
    ($l:expr, $conv:expr) => {
        $crate::blocks::build::BlockViews {
            norm_in: &$l.norm_in,
            post_norm: &$l.post_norm,
            pre_hada: &$l.pre_hada,
            attn_gate: &$l.attn_gate,
            attn: $crate::blocks::attention::AttnTensors {
                q_proj: &$l.q_proj,
                k_proj: &$l.k_proj,
                v_proj: &$l.v_proj,
                gate_proj: &$l.gate_proj,
                out_proj: &$l.out_proj,
                q_norm: &$l.q_norm,
                k_norm: &$l.k_norm,
                conv: $conv,
            },
        }
    };
}
pub(crate) use block_views;

/// What a generation builds itself; `B` yields each block's views and MLP, in layer order.
pub(crate) struct Own<'a, G: Generation, B> {
    pub(crate) blocks: B,
    pub(crate) heads: Vec<G::Head<'a>>,
    pub(crate) mlp_shared: <G::Mlp as Mlp>::Shared,
}

impl<'a, G: Generation> Model<'a, G> {
    /// Builds the model over a container's views (borrowed, zero-copy) and what the generation
    /// builds of its own.
    pub(crate) fn build<'c, B>(
        g: Geometry<G::Attention>,
        v: Views<'c, 'a>,
        own: Own<'a, G, B>,
    ) -> Result<Self>
    where
        B: Iterator<Item = Result<(BlockViews<'c, 'a>, G::Mlp)>>,
    {
        let (cbs, d) = (v.codebooks, g.d_model);
        if v.blocks != g.num_layers || v.sites.len() != g.engram_sites.len() {
            return Err(Error::BadHeader {
                field: "num_layers",
                value: v.blocks as u64,
                reason: "tensors disagree with the header",
            });
        }
        let embedding = cq(v.embedding, cbs, g.vocab, d)?;
        let mut mhc = mhc::load(v.mhc, cbs, g.num_layers, g.mhc_lanes, d)?.into_iter();
        let heads = Heads::new(g.num_heads, g.num_kv_heads, g.qk_head_dim, g.v_head_dim);
        let mut layers = Vec::with_capacity(g.num_layers);
        for (i, block) in own.blocks.enumerate() {
            let (b, mlp) = block?;
            layers.push(Layer {
                norm_in: gain(b.norm_in, d)?,
                post_norm: gain(b.post_norm, d)?,
                pre_hada: gain(b.pre_hada, d)?,
                attn: Attention::new(&b.attn, &heads, d, cbs)?,
                attn_gate: sigmoid(floats(b.attn_gate, 1)?[0]),
                mlp,
                mhc: mhc.next().ok_or(Error::BadHeader {
                    field: "num_layers",
                    value: i as u64,
                    reason: "missing mHC rows",
                })?,
            });
        }
        let engram = g.engram.clone();
        let mut sites = Vec::with_capacity(v.sites.len());
        for (i, (s, &layer)) in v.sites.iter().zip(&g.engram_sites).enumerate() {
            if G::EVERY_SITE || !g.engram_sites[..i].contains(&layer) {
                sites.push(Site::new(s, layer, &engram, cbs)?);
            }
        }
        let stack = Stack {
            d_model: d,
            lanes: g.mhc_lanes,
            vocab: g.vocab,
            rope_theta: g.rope_theta,
            lm_head: embedding.row_block(0, g.logits_vocab)?,
            embedding,
            embed_scale: libm::sqrt(d as f64) as f32,
            layers,
            sites,
            engram,
            final_norm: gain(v.final_norm, d)?,
            mlp_shared: own.mlp_shared,
            heads,
            pad_id: v.pad,
            a8_mixing: G::A8_MIXING,
        };
        Ok(Self { geometry: g, stack, heads: own.heads })
    }
}
