//! `.cact` containers of both Needle generations, read in place.
//!
//! Layout (little-endian): a fixed header carrying the architecture geometry (196 bytes in
//! Needle 3, 120 in Needle 2), 28 f32 codebook levels, a nameless directory of 44-byte records,
//! then the tensor blobs. Records are positional: their meaning comes from the canon order the
//! exporter walks, which the reader re-walks from the header geometry, checking every record's
//! dtype and shape against what that position must hold. Nothing is copied; every
//! [`TensorView`] borrows the input.
//!
//! Refusals are typed: `BadTag`/`WrongGeneration` for the tag, `Truncated` for a header,
//! codebook or directory that runs past the input, `BadHeader` for impossible geometry or a
//! tensor count the geometry does not imply, `BadTensor { index, field }` for a record that is
//! malformed or not what its position needs, `BadTokenizer` for a mis-framed attachment.

mod bytes;
mod canon;
mod canon_layer;
mod canon_shared;
mod canon_v2;
mod canon_v3;
mod codebooks;
mod directory;
mod header;
mod header_v2;
mod header_v3;
mod heads;
mod names;
mod permutation;
mod tensor;
mod tokenizer_blob;
mod walk;

pub use canon::{Canon, ContainerOf};
pub use canon_layer::LayerCore;
pub use canon_shared::{EngramSite, MhcTensors};
pub use canon_v2::{V2Canon, V2Container, V2Layer};
pub use canon_v3::{V3Canon, V3Container, V3Layer, WalshPermutations};
pub use codebooks::{Codebooks, CODEBOOK_LEN};
pub use directory::{RECORD_LEN, TERNARY_BITS};
pub use header::{Core, EngramFields, Field, MAX_ENGRAM_ORDER, MAX_LAYERS, MAX_SEQ_LEN};
pub use header_v2::{V2Header, V2_HEADER_LEN, V2_TAG};
pub use header_v3::{V3Header, V3_HEADER_LEN, V3_TAG};
pub use heads::{HeadKind, ProbeHeadTensors, V2HeadKind, V2ProbeHead};
pub use names::{NamedTensor, Scope, TensorName};
pub use tensor::{DType, FloatValues, TensorView};
pub use tokenizer_blob::TokenizerSummary;

use crate::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    V2,
    V3,
}

impl Generation {
    /// 2 or 3.
    pub fn number(self) -> u8 {
        match self {
            Self::V2 => 2,
            Self::V3 => 3,
        }
    }
}

/// The generation named by the first four bytes (never by a file name).
pub fn generation_of(input: &[u8]) -> Result<Generation> {
    let tag = bytes::Le::window(input, 0, 4, "header")?.u32(0)?;
    match tag {
        V3_TAG => Ok(Generation::V3),
        V2_TAG => Ok(Generation::V2),
        found => Err(Error::BadTag { found }),
    }
}

/// A container of either generation.
#[derive(Clone, Debug, PartialEq)]
pub enum Container<'a> {
    V2(V2Container<'a>),
    V3(V3Container<'a>),
}

/// Parses and fully validates a container of either generation.
pub fn parse(input: &[u8]) -> Result<Container<'_>> {
    Ok(match generation_of(input)? {
        Generation::V2 => Container::V2(V2Container::parse(input)?),
        Generation::V3 => Container::V3(V3Container::parse(input)?),
    })
}

impl<'a> Container<'a> {
    pub fn generation(&self) -> Generation {
        match self {
            Self::V2(_) => Generation::V2,
            Self::V3(_) => Generation::V3,
        }
    }

    /// Every record in directory order, with its canon name.
    pub fn tensors(&self) -> &[NamedTensor<'a>] {
        match self {
            Self::V2(c) => &c.tensors,
            Self::V3(c) => &c.tensors,
        }
    }

    pub fn codebooks(&self) -> &Codebooks {
        match self {
            Self::V2(c) => &c.codebooks,
            Self::V3(c) => &c.codebooks,
        }
    }

    /// The RAW tokenizer attachment.
    pub fn tokenizer(&self) -> &'a [u8] {
        match self {
            Self::V2(c) => c.tokenizer,
            Self::V3(c) => c.tokenizer,
        }
    }

    pub fn tokenizer_summary(&self) -> TokenizerSummary {
        match self {
            Self::V2(c) => c.tokenizer_summary,
            Self::V3(c) => c.tokenizer_summary,
        }
    }

    /// Header fields under upstream's `read_export` names.
    pub fn header_fields(&self) -> alloc::vec::Vec<(&'static str, Field<'_>)> {
        match self {
            Self::V2(c) => c.header.fields(),
            Self::V3(c) => c.header.fields(),
        }
    }
}
