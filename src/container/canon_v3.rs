//! The Needle 3 canon (upstream 3.2.8 `export._tensors`): embedding; per layer 24 tensors, 27
//! with q/k/v conv taps; 9 mHC tensors; the two FP32 Walsh permutations `hada_p1`, `hada_p2`
//! (missing from upstream's documented order); 4 per Engram site; `final_norm`; optional probe
//! heads; the RAW tokenizer last.
use alloc::vec::Vec;

use super::canon::{canon, Walks};
use super::canon_layer::{head_names, AttnShapes, HeadNames, LayerCore};
use super::canon_shared::Stack;
use super::header_v3::{V3Header, V3_HEADER_LEN};
use super::heads::{self, ProbeHeadTensors};
use super::names::{Scope, TensorName};
use super::tensor::TensorView;
use super::walk::{conform, dim, Dim, Kind, Walk};
use super::{permutation, Generation};
use crate::Result;

/// One transformer block's tensors, in file order: the [`LayerCore`] (it reads as one; the conv
/// taps sit after its `v_proj`), then the Walsh-Monarch MLP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V3Layer<'a> {
    pub core: LayerCore<'a>,
    /// Present when `qkv_conv_taps > 0`: `(taps, width)`.
    pub q_taps: Option<TensorView<'a>>,
    pub k_taps: Option<TensorView<'a>>,
    pub v_taps: Option<TensorView<'a>>,
    pub d1: TensorView<'a>,
    pub d2: TensorView<'a>,
    pub b2: TensorView<'a>,
    pub d3: TensorView<'a>,
    pub d4: TensorView<'a>,
    /// Kronecker factors of the three Walsh-Monarch stages: `wNa (ba, ba)`, `wNb (bb, bb)`.
    pub w1a: TensorView<'a>,
    pub w1b: TensorView<'a>,
    pub w2a: TensorView<'a>,
    pub w2b: TensorView<'a>,
    pub w3a: TensorView<'a>,
    pub w3b: TensorView<'a>,
    /// `(d_model, rank)` and `(rank, hada_n)`.
    pub cond_v: TensorView<'a>,
    pub cond_u: TensorView<'a>,
}

/// `(hada_n,)` FP32 permutations of `0..hada_n` (checked), between mHC and Engram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalshPermutations<'a> {
    pub hada_p1: TensorView<'a>,
    pub hada_p2: TensorView<'a>,
}

canon! {
    /// Needle 3's canon (its container's embedding: first `logits_vocab()` rows are the head).
    V3Canon => V3Container {
        Header = V3Header,
        Layer = V3Layer,
        Own = WalshPermutations<'a>,
        Head = ProbeHeadTensors,
    }
}

/// Needle 3's query/key and value heads have widths of their own.
const HEAD_NAMES: HeadNames = head_names!("qk_head_dim", "v_head_dim");

/// Hadamard block sizes for `n`: upstream's `_hada_blocks`, `a = 2^(bitlen(n-1) / 2)`, `b = n / a`.
fn hada_blocks(n: u32) -> (u32, u32) {
    let bit_length = u32::BITS - (n - 1).leading_zeros();
    let a = 1 << (bit_length / 2);
    (a, n / a)
}

/// The shapes of Needle 3's own records.
pub(crate) struct Shapes {
    attn: AttnShapes,
    /// `None` without conv taps.
    taps: Option<Dim>,
    n: Dim,
    block_a: Dim,
    block_b: Dim,
}

impl Walks for V3Canon {
    const GENERATION: Generation = Generation::V3;
    const HEADER_LEN: u64 = V3_HEADER_LEN;
    /// 1-4 bits and 5 = ternary.
    const WIDTHS: &'static [u32] = &[1, 2, 3, 4, 5];
    /// The manifest plus 6 per head (7 for the router), for every subset of {embedding,
    /// confidence, router}.
    const HEAD_EXTRAS: &'static [u64] = &[0, 7, 8, 13, 14, 20];
    type Shapes = Shapes;

    #[inline]
    fn read_header(input: &[u8]) -> Result<V3Header> {
        V3Header::read(input)
    }

    #[inline]
    fn model_records(h: &V3Header) -> u64 {
        let per_layer = if h.qkv_conv_taps > 0 { 27 } else { 24 };
        1 + u64::from(h.num_layers) * per_layer + 9 + 2 + 4 * u64::from(h.engram.num_sites) + 1
    }

    #[inline]
    fn shapes(h: &V3Header) -> Result<(Stack, Shapes)> {
        let (block_a, block_b) = hada_blocks(h.hada_n);
        let stack = Stack::new(&h.core, &h.engram)?;
        let attn = AttnShapes::new(&h.core, h.v_head_dim, &HEAD_NAMES)?;
        let taps =
            (h.qkv_conv_taps > 0).then(|| dim(h.qkv_conv_taps.into(), "must equal qkv_conv_taps"));
        let shapes = Shapes {
            attn,
            taps,
            n: dim(h.hada_n.into(), "must equal hada_n"),
            block_a: dim(block_a.into(), "must equal hada_n's first Kronecker factor"),
            block_b: dim(block_b.into(), "must equal hada_n's second Kronecker factor"),
        };
        Ok((stack, shapes))
    }

    fn layer<'a>(s: &Shapes, stack: &Stack, w: &mut Walk<'a>, i: u32) -> Result<V3Layer<'a>> {
        let name = |field| TensorName { scope: Scope::Layer(i), field };
        let f = Kind::Float;
        let a = &s.attn;
        let (core, (q_taps, k_taps, v_taps)) = a.walk(stack, w, i, |w| match s.taps {
            Some(t) => Ok((
                Some(w.expect(name("q_taps"), f, &[t, a.q_out])?),
                Some(w.expect(name("k_taps"), f, &[t, a.k_out])?),
                Some(w.expect(name("v_taps"), f, &[t, a.v_out])?),
            )),
            None => Ok((None, None, None)),
        })?;
        let d1 = w.expect(name("d1"), f, &[s.n])?;
        let d2 = w.expect(name("d2"), f, &[s.n])?;
        let b2 = w.expect(name("b2"), f, &[s.n])?;
        let d3 = w.expect(name("d3"), f, &[s.n])?;
        let d4 = w.expect(name("d4"), f, &[s.n])?;
        let (ba, bb) = (s.block_a, s.block_b);
        let w1a = w.expect(name("w1a"), f, &[ba, ba])?;
        let w1b = w.expect(name("w1b"), f, &[bb, bb])?;
        let w2a = w.expect(name("w2a"), f, &[ba, ba])?;
        let w2b = w.expect(name("w2b"), f, &[bb, bb])?;
        let w3a = w.expect(name("w3a"), f, &[ba, ba])?;
        let w3b = w.expect(name("w3b"), f, &[bb, bb])?;
        // The conditioning rank is an upstream constant the header does not carry: cond_v
        // states it and cond_u must agree.
        let cond_v = w.take(name("cond_v"))?;
        conform(&cond_v, f, &[stack.d, dim(cond_v.shape[1].into(), "")])?;
        let rank = dim(cond_v.shape[1].into(), "must equal cond_v's rank");
        let cond_u = w.expect(name("cond_u"), f, &[rank, s.n])?;
        Ok(V3Layer {
            core,
            q_taps,
            k_taps,
            v_taps,
            d1,
            d2,
            b2,
            d3,
            d4,
            w1a,
            w1b,
            w2a,
            w2b,
            w3a,
            w3b,
            cond_v,
            cond_u,
        })
    }

    #[inline]
    fn own<'a>(s: &Shapes, w: &mut Walk<'a>) -> Result<WalshPermutations<'a>> {
        let hada_p1 = w.expect(TensorName::model("hada_p1"), Kind::Float, &[s.n])?;
        permutation::check(&hada_p1)?;
        let hada_p2 = w.expect(TensorName::model("hada_p2"), Kind::Float, &[s.n])?;
        permutation::check(&hada_p2)?;
        Ok(WalshPermutations { hada_p1, hada_p2 })
    }

    #[inline]
    fn heads<'a>(h: &V3Header, w: &mut Walk<'a>) -> Result<Vec<ProbeHeadTensors<'a>>> {
        heads::read_v3(w, h.num_layers + 1, h.d_model)
    }
}
