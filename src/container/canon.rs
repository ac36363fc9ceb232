//! One parsed container over either generation's canon: both walk the same order (embedding,
//! the blocks, mHC, the generation's own records, the Engram sites, `final_norm`, probe heads,
//! the RAW tokenizer) and differ only in what a [`Walks`] generation reads at its steps.
use alloc::vec::Vec;
use core::fmt::Debug;
use core::ops::Deref;

use super::canon_shared::{check_count, expect_generation, records, EngramSite, MhcTensors, Stack};
use super::codebooks::Codebooks;
use super::header::Core;
use super::names::NamedTensor;
use super::tensor::TensorView;
use super::tokenizer_blob::{self, TokenizerSummary};
use super::walk::Walk;
use super::Generation;
use crate::Result;

/// The types a generation's canon is made of (public as the parts of [`ContainerOf`]).
pub trait Canon {
    type Header: Clone + Debug + PartialEq + Deref<Target = Core>;
    /// One transformer block's tensors.
    type Layer<'a>: Clone + Debug + PartialEq;
    /// What the generation writes between the mHC block and the Engram sites.
    type Own<'a>: Clone + Debug + PartialEq;
    type Head<'a>: Clone + Debug + PartialEq;
}

/// How a generation reads its canon: the header, its counts, and its own steps of the walk.
/// An implementation marks its steps but `layer` `#[inline]`: each has one caller, [`parse`],
/// and kept apart they grow the wasm module by ~10 KB (a layer walk stays out of line: inlined,
/// it grows the module instead).
///
/// [`parse`]: ContainerOf::parse
pub(crate) trait Walks: Canon + Sized {
    const GENERATION: Generation;
    const HEADER_LEN: u64;
    /// CQ record widths the generation defines.
    const WIDTHS: &'static [u32];
    /// Records a head set can add after `final_norm`.
    const HEAD_EXTRAS: &'static [u64];
    /// The shapes of the generation's own records, computed once with overflow checks.
    type Shapes;

    fn read_header(input: &[u8]) -> Result<Self::Header>;
    /// Records through `final_norm`, from the header alone.
    fn model_records(h: &Self::Header) -> u64;
    fn shapes(h: &Self::Header) -> Result<(Stack, Self::Shapes)>;
    fn layer<'a>(s: &Self::Shapes, d: &Stack, w: &mut Walk<'a>, i: u32) -> Result<Self::Layer<'a>>;
    fn own<'a>(s: &Self::Shapes, w: &mut Walk<'a>) -> Result<Self::Own<'a>>;
    fn heads<'a>(h: &Self::Header, w: &mut Walk<'a>) -> Result<Vec<Self::Head<'a>>>;
}

/// Declares a generation's canon: its marker type, its container, the parts that container
/// holds, and its layer struct (with a `core` field) reading as the [`LayerCore`] (`l.q_proj`).
///
/// [`LayerCore`]: super::LayerCore
macro_rules! canon {
    (
        $(#[$doc:meta])*
        $gen:ident => $container:ident {
            Header = $header:ty,
            Layer = $layer:ident,
            Own = $own:ty,
            Head = $head:ident $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $gen;

        /// A parsed container of this generation.
        pub type $container<'a> = $crate::container::ContainerOf<'a, $gen>;

        impl $crate::container::Canon for $gen {
            type Header = $header;
            type Layer<'a> = $layer<'a>;
            type Own<'a> = $own;
            type Head<'a> = $head<'a>;
        }

        impl<'a> core::ops::Deref for $layer<'a> {
            type Target = $crate::container::LayerCore<'a>;

            fn deref(&self) -> &Self::Target {
                &self.core
            }
        }
    };
}
pub(crate) use canon;

/// A parsed container of generation `G`: every tensor checked against the header geometry. It
/// reads as the generation's own records (`c.hada_p1` in Needle 3).
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerOf<'a, G: Canon> {
    pub header: G::Header,
    pub codebooks: Codebooks,
    /// `(vocab, d_model)` CQ, tied with the output head (Needle 3: first `logits_vocab()` rows).
    pub embedding: TensorView<'a>,
    pub layers: Vec<G::Layer<'a>>,
    pub mhc: MhcTensors<'a>,
    pub own: G::Own<'a>,
    pub engram: Vec<EngramSite<'a>>,
    pub final_norm: TensorView<'a>,
    pub heads: Vec<G::Head<'a>>,
    pub tokenizer: &'a [u8],
    pub tokenizer_summary: TokenizerSummary,
    /// Every record in directory order, named by its canon position.
    pub tensors: Vec<NamedTensor<'a>>,
}

impl<'a, G: Canon> Deref for ContainerOf<'a, G> {
    type Target = G::Own<'a>;

    fn deref(&self) -> &Self::Target {
        &self.own
    }
}

// `Walks` is sealed in this crate (its steps take the walk's own types): a caller parses
// through `V2Container::parse` or `V3Container::parse`, never names the bound.
#[allow(private_bounds)]
impl<'a, G: Walks> ContainerOf<'a, G> {
    /// Parses a container of generation `G`; one of the other generation is refused with
    /// `WrongGeneration`.
    pub fn parse(input: &'a [u8]) -> Result<Self> {
        expect_generation(input, G::GENERATION)?;
        let header = G::read_header(input)?;
        check_count(G::model_records(&header), G::HEAD_EXTRAS, header.num_tensors)?;
        let (codebooks, mut w) =
            records(input, G::HEADER_LEN, header.codebook_len, header.num_tensors, G::WIDTHS)?;
        let (stack, shapes) = G::shapes(&header)?;
        let embedding = stack.embedding(&mut w)?;
        // Plain loops: collecting into a `Result` brings a copy of core's `GenericShunt` per
        // item type into the wasm module.
        let mut layers = Vec::new();
        for i in 0..header.num_layers {
            layers.push(G::layer(&shapes, &stack, &mut w, i)?);
        }
        let mhc = stack.mhc(&mut w)?;
        let own = G::own(&shapes, &mut w)?;
        let mut engram = Vec::new();
        for s in 0..stack.engram_sites {
            engram.push(stack.engram_site(&mut w, s)?);
        }
        let final_norm = stack.final_norm(&mut w)?;
        let heads = if w.remaining() > 1 { G::heads(&header, &mut w)? } else { Vec::new() };
        let tokenizer = w.tokenizer()?;
        let tokenizer_summary = tokenizer_blob::check(tokenizer, header.vocab)?;
        Ok(ContainerOf {
            header,
            codebooks,
            embedding,
            layers,
            mhc,
            own,
            engram,
            final_norm,
            heads,
            tokenizer,
            tokenizer_summary,
            tensors: w.finish(),
        })
    }
}
