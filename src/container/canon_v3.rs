//! The Needle 3 canon (upstream 3.2.8 `export._tensors`): embedding; per layer 24 tensors, 27
//! with q/k/v conv taps; 9 mHC tensors; the two FP32 Walsh permutations `hada_p1`, `hada_p2`
//! (missing from upstream's documented order); 4 per Engram site; `final_norm`; optional probe
//! heads; the RAW tokenizer last.
use alloc::vec::Vec;

use super::canon_shared::{check_count, expect_generation, records, EngramSite, MhcTensors, Stack};
use super::codebooks::Codebooks;
use super::header_v3::{V3Header, V3_HEADER_LEN};
use super::heads::{self, ProbeHeadTensors};
use super::names::{NamedTensor, Scope, TensorName};
use super::tensor::TensorView;
use super::tokenizer_blob::{self, TokenizerSummary};
use super::walk::{conform, dim, product, Dim, Kind, Walk};
use super::{permutation, Generation};
use crate::Result;

/// CQ record widths Needle 3 defines: 1-4 bits and 5 = ternary.
const WIDTHS: [u32; 5] = [1, 2, 3, 4, 5];

/// Records a head set can add after `final_norm`: the manifest plus 6 per head (7 for the
/// router), for every subset of {embedding, confidence, router}.
const HEAD_EXTRAS: [u64; 6] = [0, 7, 8, 13, 14, 20];

/// One transformer block's tensors, in file order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V3Layer<'a> {
    pub norm_in: TensorView<'a>,
    pub q_proj: TensorView<'a>,
    pub k_proj: TensorView<'a>,
    pub v_proj: TensorView<'a>,
    /// Present when `qkv_conv_taps > 0`: `(taps, width)`.
    pub q_taps: Option<TensorView<'a>>,
    pub k_taps: Option<TensorView<'a>>,
    pub v_taps: Option<TensorView<'a>>,
    pub q_norm: TensorView<'a>,
    pub k_norm: TensorView<'a>,
    pub gate_proj: TensorView<'a>,
    pub out_proj: TensorView<'a>,
    pub post_norm: TensorView<'a>,
    /// `(1,)`: the attention residual gate logit.
    pub attn_gate: TensorView<'a>,
    pub pre_hada: TensorView<'a>,
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

/// A parsed Needle 3 container: every tensor checked against the header geometry.
#[derive(Clone, Debug, PartialEq)]
pub struct V3Container<'a> {
    pub header: V3Header,
    pub codebooks: Codebooks,
    /// `(vocab, d_model)` CQ, tied with the output head (first `logits_vocab()` rows).
    pub embedding: TensorView<'a>,
    pub layers: Vec<V3Layer<'a>>,
    pub mhc: MhcTensors<'a>,
    /// `(hada_n,)` FP32 permutations of `0..hada_n` (checked).
    pub hada_p1: TensorView<'a>,
    pub hada_p2: TensorView<'a>,
    pub engram: Vec<EngramSite<'a>>,
    pub final_norm: TensorView<'a>,
    pub heads: Vec<ProbeHeadTensors<'a>>,
    pub tokenizer: &'a [u8],
    pub tokenizer_summary: TokenizerSummary,
    /// Every record in directory order, named by its canon position.
    pub tensors: Vec<NamedTensor<'a>>,
}

impl<'a> V3Container<'a> {
    /// Parses a Needle 3 container; a Needle 2 one is refused with `WrongGeneration`.
    pub fn parse(input: &'a [u8]) -> Result<Self> {
        expect_generation(input, Generation::V3)?;
        let header = V3Header::read(input)?;
        check_count(model_records(&header), &HEAD_EXTRAS, header.num_tensors)?;
        let (codebooks, walk) =
            records(input, V3_HEADER_LEN, header.codebook_len, header.num_tensors, &WIDTHS)?;
        Canon::new(&header)?.walk(header, codebooks, walk)
    }
}

/// Records through `final_norm`, from the header alone.
fn model_records(h: &V3Header) -> u64 {
    let per_layer = if h.qkv_conv_taps > 0 { 27 } else { 24 };
    1 + u64::from(h.num_layers) * per_layer + 9 + 2 + 4 * u64::from(h.engram.num_sites) + 1
}

/// Hadamard block sizes for `n`: upstream's `_hada_blocks`, `a = 2^(bitlen(n-1) / 2)`, `b = n / a`.
fn hada_blocks(n: u32) -> (u32, u32) {
    let bit_length = u32::BITS - (n - 1).leading_zeros();
    let a = 1 << (bit_length / 2);
    (a, n / a)
}

/// Every shape the geometry predicts, computed once with overflow checks.
struct Canon {
    stack: Stack,
    q_out: Dim,
    k_out: Dim,
    v_out: Dim,
    attn_out: Dim,
    taps: Dim,
    qk_head: Dim,
    one: Dim,
    n: Dim,
    block_a: Dim,
    block_b: Dim,
}

impl Canon {
    fn new(h: &V3Header) -> Result<Self> {
        let (block_a, block_b) = hada_blocks(h.hada_n);
        let stack = Stack::new(&h.core, &h.engram)?;
        Ok(Self {
            stack,
            q_out: dim(
                product(&[h.num_heads, h.qk_head_dim], "qk_head_dim")?,
                "must equal num_heads * qk_head_dim",
            ),
            k_out: dim(
                product(&[h.num_kv_heads, h.qk_head_dim], "qk_head_dim")?,
                "must equal num_kv_heads * qk_head_dim",
            ),
            v_out: dim(
                product(&[h.num_kv_heads, h.v_head_dim], "v_head_dim")?,
                "must equal num_kv_heads * v_head_dim",
            ),
            attn_out: dim(
                product(&[h.num_heads, h.v_head_dim], "v_head_dim")?,
                "must equal num_heads * v_head_dim",
            ),
            taps: dim(h.qkv_conv_taps.into(), "must equal qkv_conv_taps"),
            qk_head: dim(h.qk_head_dim.into(), "must equal qk_head_dim"),
            one: dim(1, "must be 1"),
            n: dim(h.hada_n.into(), "must equal hada_n"),
            block_a: dim(block_a.into(), "must equal hada_n's first Kronecker factor"),
            block_b: dim(block_b.into(), "must equal hada_n's second Kronecker factor"),
        })
    }

    fn walk<'a>(
        &self,
        header: V3Header,
        codebooks: Codebooks,
        mut w: Walk<'a>,
    ) -> Result<V3Container<'a>> {
        let embedding = self.stack.embedding(&mut w)?;
        let layers = (0..header.num_layers)
            .map(|i| self.layer(&mut w, i, header.qkv_conv_taps > 0))
            .collect::<Result<Vec<_>>>()?;
        let mhc = self.stack.mhc(&mut w)?;
        let hada_p1 = w.expect(TensorName::model("hada_p1"), Kind::Float, &[self.n])?;
        permutation::check(&hada_p1)?;
        let hada_p2 = w.expect(TensorName::model("hada_p2"), Kind::Float, &[self.n])?;
        permutation::check(&hada_p2)?;
        let engram = (0..header.engram.num_sites)
            .map(|s| self.stack.engram_site(&mut w, s))
            .collect::<Result<Vec<_>>>()?;
        let final_norm = self.stack.final_norm(&mut w)?;
        let heads = if w.remaining() > 1 {
            heads::read_v3(&mut w, header.num_layers + 1, header.d_model)?
        } else {
            Vec::new()
        };
        let tokenizer = w.tokenizer()?;
        let tokenizer_summary = tokenizer_blob::check(tokenizer, header.vocab)?;
        Ok(V3Container {
            header,
            codebooks,
            embedding,
            layers,
            mhc,
            hada_p1,
            hada_p2,
            engram,
            final_norm,
            heads,
            tokenizer,
            tokenizer_summary,
            tensors: w.finish(),
        })
    }

    fn layer<'a>(&self, w: &mut Walk<'a>, i: u32, has_taps: bool) -> Result<V3Layer<'a>> {
        let name = |field| TensorName { scope: Scope::Layer(i), field };
        let (f, cq) = (Kind::Float, Kind::Cq);
        let norm_in = w.expect(name("norm_in"), f, &[self.stack.d])?;
        let q_proj = w.expect(name("q_proj"), cq, &[self.q_out, self.stack.d])?;
        let k_proj = w.expect(name("k_proj"), cq, &[self.k_out, self.stack.d])?;
        let v_proj = w.expect(name("v_proj"), cq, &[self.v_out, self.stack.d])?;
        let (q_taps, k_taps, v_taps) = if has_taps {
            (
                Some(w.expect(name("q_taps"), f, &[self.taps, self.q_out])?),
                Some(w.expect(name("k_taps"), f, &[self.taps, self.k_out])?),
                Some(w.expect(name("v_taps"), f, &[self.taps, self.v_out])?),
            )
        } else {
            (None, None, None)
        };
        let q_norm = w.expect(name("q_norm"), f, &[self.qk_head])?;
        let k_norm = w.expect(name("k_norm"), f, &[self.qk_head])?;
        let gate_proj = w.expect(name("gate_proj"), cq, &[self.attn_out, self.stack.d])?;
        let out_proj = w.expect(name("out_proj"), cq, &[self.stack.d, self.attn_out])?;
        let post_norm = w.expect(name("post_norm"), f, &[self.stack.d])?;
        let attn_gate = w.expect(name("attn_gate"), f, &[self.one])?;
        let pre_hada = w.expect(name("pre_hada"), f, &[self.stack.d])?;
        let d1 = w.expect(name("d1"), f, &[self.n])?;
        let d2 = w.expect(name("d2"), f, &[self.n])?;
        let b2 = w.expect(name("b2"), f, &[self.n])?;
        let d3 = w.expect(name("d3"), f, &[self.n])?;
        let d4 = w.expect(name("d4"), f, &[self.n])?;
        let (a, b) = (self.block_a, self.block_b);
        let w1a = w.expect(name("w1a"), f, &[a, a])?;
        let w1b = w.expect(name("w1b"), f, &[b, b])?;
        let w2a = w.expect(name("w2a"), f, &[a, a])?;
        let w2b = w.expect(name("w2b"), f, &[b, b])?;
        let w3a = w.expect(name("w3a"), f, &[a, a])?;
        let w3b = w.expect(name("w3b"), f, &[b, b])?;
        // The conditioning rank is an upstream constant the header does not carry: cond_v
        // states it and cond_u must agree.
        let cond_v = w.take(name("cond_v"))?;
        conform(&cond_v, f, &[self.stack.d, dim(cond_v.shape[1].into(), "")])?;
        let rank = dim(cond_v.shape[1].into(), "must equal cond_v's rank");
        let cond_u = w.expect(name("cond_u"), f, &[rank, self.n])?;
        Ok(V3Layer {
            norm_in,
            q_proj,
            k_proj,
            v_proj,
            q_taps,
            k_taps,
            v_taps,
            q_norm,
            k_norm,
            gate_proj,
            out_proj,
            post_norm,
            attn_gate,
            pre_hada,
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
}
