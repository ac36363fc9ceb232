//! The Needle 2 canon (upstream 2.0.15 `export._tensors`): embedding; per layer 14 tensors
//! (one head width for q, k and v; a three-diagonal Walsh MLP); 9 mHC tensors; 4 per Engram
//! site; `final_norm`; optional all-FP16 probe heads; the RAW tokenizer last.
use alloc::vec::Vec;

use super::canon_shared::{check_count, expect_generation, records, EngramSite, MhcTensors, Stack};
use super::codebooks::Codebooks;
use super::header_v2::{V2Header, V2_HEADER_LEN};
use super::heads::{self, V2ProbeHead};
use super::names::{NamedTensor, Scope, TensorName};
use super::tensor::TensorView;
use super::tokenizer_blob::{self, TokenizerSummary};
use super::walk::{dim, product, Dim, Kind, Walk};
use super::Generation;
use crate::Result;

/// CQ record widths Needle 2 writes: 2-4 bits and 5 = ternary (its bits map has no 1-bit).
const WIDTHS: [u32; 4] = [2, 3, 4, 5];

/// Records a head set can add after `final_norm`: the manifest plus 3 per head.
const HEAD_EXTRAS: [u64; 3] = [0, 4, 7];

/// One transformer block's tensors, in file order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V2Layer<'a> {
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
    pub d1: TensorView<'a>,
    pub d2: TensorView<'a>,
    pub d3: TensorView<'a>,
}

/// A parsed Needle 2 container: every tensor checked against the header geometry.
#[derive(Clone, Debug, PartialEq)]
pub struct V2Container<'a> {
    pub header: V2Header,
    pub codebooks: Codebooks,
    /// `(vocab, d_model)` CQ, tied with the output head.
    pub embedding: TensorView<'a>,
    pub layers: Vec<V2Layer<'a>>,
    pub mhc: MhcTensors<'a>,
    pub engram: Vec<EngramSite<'a>>,
    pub final_norm: TensorView<'a>,
    pub heads: Vec<V2ProbeHead<'a>>,
    pub tokenizer: &'a [u8],
    pub tokenizer_summary: TokenizerSummary,
    /// Every record in directory order, named by its canon position.
    pub tensors: Vec<NamedTensor<'a>>,
}

impl<'a> V2Container<'a> {
    /// Parses a Needle 2 container; a Needle 3 one is refused with `WrongGeneration`.
    pub fn parse(input: &'a [u8]) -> Result<Self> {
        expect_generation(input, Generation::V2)?;
        let header = V2Header::read(input)?;
        check_count(model_records(&header), &HEAD_EXTRAS, header.num_tensors)?;
        let (codebooks, walk) =
            records(input, V2_HEADER_LEN, header.codebook_len, header.num_tensors, &WIDTHS)?;
        Canon::new(&header)?.walk(header, codebooks, walk)
    }
}

/// Records through `final_norm`, from the header alone.
fn model_records(h: &V2Header) -> u64 {
    1 + u64::from(h.num_layers) * 14 + 9 + 4 * u64::from(h.engram.num_sites) + 1
}

/// Every shape the geometry predicts, computed once with overflow checks.
struct Canon {
    stack: Stack,
    q_out: Dim,
    kv_out: Dim,
    head: Dim,
    one: Dim,
    n: Dim,
}

impl Canon {
    fn new(h: &V2Header) -> Result<Self> {
        let stack = Stack::new(&h.core, &h.engram)?;
        Ok(Self {
            stack,
            q_out: dim(
                product(&[h.num_heads, h.qk_head_dim], "head_dim")?,
                "must equal num_heads * head_dim",
            ),
            kv_out: dim(
                product(&[h.num_kv_heads, h.qk_head_dim], "head_dim")?,
                "must equal num_kv_heads * head_dim",
            ),
            head: dim(h.qk_head_dim.into(), "must equal head_dim"),
            one: dim(1, "must be 1"),
            n: dim(h.hada_n.into(), "must equal hada_n"),
        })
    }

    fn walk<'a>(
        &self,
        header: V2Header,
        codebooks: Codebooks,
        mut w: Walk<'a>,
    ) -> Result<V2Container<'a>> {
        let embedding = self.stack.embedding(&mut w)?;
        let layers =
            (0..header.num_layers).map(|i| self.layer(&mut w, i)).collect::<Result<Vec<_>>>()?;
        let mhc = self.stack.mhc(&mut w)?;
        let engram = (0..header.engram.num_sites)
            .map(|s| self.stack.engram_site(&mut w, s))
            .collect::<Result<Vec<_>>>()?;
        let final_norm = self.stack.final_norm(&mut w)?;
        let heads =
            if w.remaining() > 1 { heads::read_v2(&mut w, header.d_model)? } else { Vec::new() };
        let tokenizer = w.tokenizer()?;
        let tokenizer_summary = tokenizer_blob::check(tokenizer, header.vocab)?;
        Ok(V2Container {
            header,
            codebooks,
            embedding,
            layers,
            mhc,
            engram,
            final_norm,
            heads,
            tokenizer,
            tokenizer_summary,
            tensors: w.finish(),
        })
    }

    fn layer<'a>(&self, w: &mut Walk<'a>, i: u32) -> Result<V2Layer<'a>> {
        let name = |field| TensorName { scope: Scope::Layer(i), field };
        let (f, cq, d) = (Kind::Float, Kind::Cq, self.stack.d);
        Ok(V2Layer {
            norm_in: w.expect(name("norm_in"), f, &[d])?,
            q_proj: w.expect(name("q_proj"), cq, &[self.q_out, d])?,
            k_proj: w.expect(name("k_proj"), cq, &[self.kv_out, d])?,
            v_proj: w.expect(name("v_proj"), cq, &[self.kv_out, d])?,
            q_norm: w.expect(name("q_norm"), f, &[self.head])?,
            k_norm: w.expect(name("k_norm"), f, &[self.head])?,
            gate_proj: w.expect(name("gate_proj"), cq, &[self.q_out, d])?,
            out_proj: w.expect(name("out_proj"), cq, &[d, self.q_out])?,
            post_norm: w.expect(name("post_norm"), f, &[d])?,
            attn_gate: w.expect(name("attn_gate"), f, &[self.one])?,
            pre_hada: w.expect(name("pre_hada"), f, &[d])?,
            d1: w.expect(name("d1"), f, &[self.n])?,
            d2: w.expect(name("d2"), f, &[self.n])?,
            d3: w.expect(name("d3"), f, &[self.n])?,
        })
    }
}
