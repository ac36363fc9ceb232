//! The part of a block both canons lay out alike: the input norm, the gated attention with its
//! norms, the residual gate and the MLP's input norm. Needle 3's q/k/v conv taps sit inside it
//! (after `v_proj`), so the walk hands that step to the generation.
use super::canon_shared::Stack;
use super::header::Core;
use super::names::{Scope, TensorName};
use super::tensor::TensorView;
use super::walk::{dim, product, Dim, Kind, Walk};
use crate::Result;

/// A block's tensors both generations hold, in file order (the generation's own fields follow).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerCore<'a> {
    pub norm_in: TensorView<'a>,
    pub q_proj: TensorView<'a>,
    pub k_proj: TensorView<'a>,
    pub v_proj: TensorView<'a>,
    pub q_norm: TensorView<'a>,
    pub k_norm: TensorView<'a>,
    pub gate_proj: TensorView<'a>,
    pub out_proj: TensorView<'a>,
    pub post_norm: TensorView<'a>,
    /// `(1,)`: the attention residual gate logit.
    pub attn_gate: TensorView<'a>,
    pub pre_hada: TensorView<'a>,
}

/// How a generation names its head widths in errors: Needle 2 has one `head_dim`, Needle 3 a
/// `qk_head_dim` and a `v_head_dim`.
pub(crate) struct HeadNames {
    pub qk: &'static str,
    pub v: &'static str,
    pub q_out: &'static str,
    pub k_out: &'static str,
    pub v_out: &'static str,
    pub attn_out: &'static str,
    pub qk_head: &'static str,
}

/// The [`HeadNames`] of a generation whose query/key head width is named `$qk` and whose
/// value head width is named `$v`.
macro_rules! head_names {
    ($qk:literal, $v:literal) => {
        $crate::container::canon_layer::HeadNames {
            qk: $qk,
            v: $v,
            q_out: concat!("must equal num_heads * ", $qk),
            k_out: concat!("must equal num_kv_heads * ", $qk),
            v_out: concat!("must equal num_kv_heads * ", $v),
            attn_out: concat!("must equal num_heads * ", $v),
            qk_head: concat!("must equal ", $qk),
        }
    };
}
pub(crate) use head_names;

/// The attention's expected widths, computed once with overflow checks.
pub(crate) struct AttnShapes {
    pub q_out: Dim,
    pub k_out: Dim,
    pub v_out: Dim,
    pub attn_out: Dim,
    qk_head: Dim,
    one: Dim,
}

impl AttnShapes {
    pub(crate) fn new(h: &Core, v_head_dim: u32, names: &HeadNames) -> Result<Self> {
        let width =
            |heads, head_dim, field, what| Ok(dim(product(&[heads, head_dim], field)?, what));
        Ok(Self {
            q_out: width(h.num_heads, h.qk_head_dim, names.qk, names.q_out)?,
            k_out: width(h.num_kv_heads, h.qk_head_dim, names.qk, names.k_out)?,
            v_out: width(h.num_kv_heads, v_head_dim, names.v, names.v_out)?,
            attn_out: width(h.num_heads, v_head_dim, names.v, names.attn_out)?,
            qk_head: dim(h.qk_head_dim.into(), names.qk_head),
            one: dim(1, "must be 1"),
        })
    }

    /// Walks block `i`'s [`LayerCore`]; `taps` reads what the generation writes after `v_proj`.
    pub(crate) fn walk<'a, T>(
        &self,
        stack: &Stack,
        w: &mut Walk<'a>,
        i: u32,
        taps: impl FnOnce(&mut Walk<'a>) -> Result<T>,
    ) -> Result<(LayerCore<'a>, T)> {
        let name = |field| TensorName { scope: Scope::Layer(i), field };
        let (f, cq, d) = (Kind::Float, Kind::Cq, stack.d);
        let norm_in = w.expect(name("norm_in"), f, &[d])?;
        let q_proj = w.expect(name("q_proj"), cq, &[self.q_out, d])?;
        let k_proj = w.expect(name("k_proj"), cq, &[self.k_out, d])?;
        let v_proj = w.expect(name("v_proj"), cq, &[self.v_out, d])?;
        let own = taps(w)?;
        let core = LayerCore {
            norm_in,
            q_proj,
            k_proj,
            v_proj,
            q_norm: w.expect(name("q_norm"), f, &[self.qk_head])?,
            k_norm: w.expect(name("k_norm"), f, &[self.qk_head])?,
            gate_proj: w.expect(name("gate_proj"), cq, &[self.attn_out, d])?,
            out_proj: w.expect(name("out_proj"), cq, &[d, self.attn_out])?,
            post_norm: w.expect(name("post_norm"), f, &[d])?,
            attn_gate: w.expect(name("attn_gate"), f, &[self.one])?,
            pre_hada: w.expect(name("pre_hada"), f, &[d])?,
        };
        Ok((core, own))
    }
}
