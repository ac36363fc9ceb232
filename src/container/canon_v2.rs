//! The Needle 2 canon (upstream 2.0.15 `export._tensors`): embedding; per layer 14 tensors
//! (one head width for q, k and v; a three-diagonal Walsh MLP); 9 mHC tensors; 4 per Engram
//! site; `final_norm`; optional all-FP16 probe heads; the RAW tokenizer last.
use alloc::vec::Vec;

use super::canon::{canon, Walks};
use super::canon_layer::{head_names, AttnShapes, HeadNames, LayerCore};
use super::canon_shared::Stack;
use super::header_v2::{V2Header, V2_HEADER_LEN};
use super::heads::{self, V2ProbeHead};
use super::names::{Scope, TensorName};
use super::tensor::TensorView;
use super::walk::{dim, Dim, Kind, Walk};
use super::Generation;
use crate::Result;

/// One transformer block's tensors, in file order: the [`LayerCore`] (it reads as one), then
/// the Walsh MLP's diagonals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V2Layer<'a> {
    pub core: LayerCore<'a>,
    pub d1: TensorView<'a>,
    pub d2: TensorView<'a>,
    pub d3: TensorView<'a>,
}

canon! {
    /// Needle 2's canon: no records of its own between mHC and Engram.
    V2Canon => V2Container {
        Header = V2Header,
        Layer = V2Layer,
        Own = (),
        Head = V2ProbeHead,
    }
}

/// Needle 2 names its one head width `head_dim`.
const HEAD_NAMES: HeadNames = head_names!("head_dim", "head_dim");

/// The shapes of Needle 2's own records.
pub(crate) struct Shapes {
    attn: AttnShapes,
    n: Dim,
}

impl Walks for V2Canon {
    const GENERATION: Generation = Generation::V2;
    const HEADER_LEN: u64 = V2_HEADER_LEN;
    /// 2-4 bits and 5 = ternary (Needle 2's bits map has no 1-bit).
    const WIDTHS: &'static [u32] = &[2, 3, 4, 5];
    /// The manifest plus 3 per head.
    const HEAD_EXTRAS: &'static [u64] = &[0, 4, 7];
    type Shapes = Shapes;

    #[inline]
    fn read_header(input: &[u8]) -> Result<V2Header> {
        V2Header::read(input)
    }

    #[inline]
    fn model_records(h: &V2Header) -> u64 {
        1 + u64::from(h.num_layers) * 14 + 9 + 4 * u64::from(h.engram.num_sites) + 1
    }

    #[inline]
    fn shapes(h: &V2Header) -> Result<(Stack, Shapes)> {
        let stack = Stack::new(&h.core, &h.engram)?;
        let attn = AttnShapes::new(&h.core, h.qk_head_dim, &HEAD_NAMES)?;
        Ok((stack, Shapes { attn, n: dim(h.hada_n.into(), "must equal hada_n") }))
    }

    fn layer<'a>(s: &Shapes, stack: &Stack, w: &mut Walk<'a>, i: u32) -> Result<V2Layer<'a>> {
        let (core, ()) = s.attn.walk(stack, w, i, |_| Ok(()))?;
        let name = |field| TensorName { scope: Scope::Layer(i), field };
        Ok(V2Layer {
            core,
            d1: w.expect(name("d1"), Kind::Float, &[s.n])?,
            d2: w.expect(name("d2"), Kind::Float, &[s.n])?,
            d3: w.expect(name("d3"), Kind::Float, &[s.n])?,
        })
    }

    #[inline]
    fn own(_: &Shapes, _: &mut Walk<'_>) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn heads<'a>(h: &V2Header, w: &mut Walk<'a>) -> Result<Vec<V2ProbeHead<'a>>> {
        heads::read_v2(w, h.d_model)
    }
}
