//! Optional probe heads, appended after `final_norm`: a `heads.manifest` of head codes, then
//! each head's tensors. Probe and query counts are read from the shapes (upstream lets a
//! config change them); only the output widths of confidence and router are fixed.
use alloc::vec::Vec;

use super::names::{Scope, TensorName};
use super::tensor::{DType, TensorView};
use super::walk::{conform, dim, product, Dim, Kind, Walk};
use crate::{Error, Result};

/// Needle 3 head codes, in canonical (file) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HeadKind {
    Embedding = 1,
    Confidence = 2,
    Router = 3,
}

impl HeadKind {
    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Embedding),
            2 => Some(Self::Confidence),
            3 => Some(Self::Router),
            _ => None,
        }
    }

    /// Upstream's parameter key, used in tensor names.
    pub fn key(self) -> &'static str {
        match self {
            Self::Embedding => "embedding_head",
            Self::Confidence => "confidence_head",
            Self::Router => "router_head",
        }
    }

    /// Fixed output width (the embedding head's comes from its `proj` shape).
    fn fixed_out(self) -> Option<u32> {
        match self {
            Self::Embedding => None,
            Self::Confidence => Some(1),
            Self::Router => Some(3),
        }
    }

    /// Records the head occupies.
    fn records(self) -> usize {
        if self == Self::Router {
            7
        } else {
            6
        }
    }
}

/// One Needle 3 probe head. `probes`, `query` and `proj` are CQ matrices in the current layout
/// (`probes` as `((L+1)*k, d_model)`) or FP16 in the older one (`probes` as `(L+1, k, d_model)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeHeadTensors<'a> {
    pub kind: HeadKind,
    pub probes: TensorView<'a>,
    /// `(L+1, k)`
    pub gain: TensorView<'a>,
    /// `(q, d_model)`
    pub query: TensorView<'a>,
    /// `(q, L+1, k)`
    pub row_bias: TensorView<'a>,
    /// `(out, q * d_model)`
    pub proj: TensorView<'a>,
    /// `(out,)`
    pub bias: TensorView<'a>,
    /// Router only: `(3,)`.
    pub calibration: Option<TensorView<'a>>,
    /// Probes per row `k`.
    pub num_probes: u32,
    /// Queries `q`.
    pub num_queries: u32,
    pub out_dim: u32,
}

/// Needle 2 head codes, in canonical (file) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum V2HeadKind {
    Contrastive = 1,
    Confidence = 2,
}

impl V2HeadKind {
    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Contrastive),
            2 => Some(Self::Confidence),
            _ => None,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Self::Contrastive => "contrastive_head",
            Self::Confidence => "confidence_head",
        }
    }
}

/// One Needle 2 probe head, all FP16: `probes (P, d_model)`, `proj (out, P * d_model)`, `bias (out,)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V2ProbeHead<'a> {
    pub kind: V2HeadKind,
    pub probes: TensorView<'a>,
    pub proj: TensorView<'a>,
    pub bias: TensorView<'a>,
    pub num_probes: u32,
    pub out_dim: u32,
}

/// Records a Needle 2 head occupies.
const V2_HEAD_RECORDS: usize = 3;

fn bad(view: &TensorView<'_>, field: &'static str, reason: &'static str) -> Error {
    Error::BadTensor { index: view.index, field, reason }
}

/// A dimension the tensor itself defines (checked for consistency by later tensors).
fn free(view: &TensorView<'_>, axis: usize) -> Dim {
    dim(view.shape[axis].into(), "")
}

/// Reads `heads.manifest`: head codes stored as floats, distinct and increasing, then checks
/// that the remaining records (all but the tokenizer) are exactly those heads' tensors.
fn manifest<K: Copy>(
    walk: &mut Walk<'_>,
    from_code: fn(u8) -> Option<K>,
    records: fn(K) -> usize,
    max_heads: u32,
) -> Result<Vec<K>> {
    let view = walk.take(TensorName::model("heads.manifest"))?;
    conform(&view, Kind::Float, &[free(&view, 0)])?;
    if view.shape[0] > max_heads {
        return Err(bad(&view, "shape[0]", "more heads than the generation defines"));
    }
    let mut kinds = Vec::with_capacity(view.shape[0] as usize);
    let mut last = 0u8;
    for value in view.float_values() {
        let next =
            (last + 1..=3).find(|&c| f32::from(c) == value).and_then(|c| Some((c, from_code(c)?)));
        let Some((code, kind)) = next else {
            return Err(bad(&view, "data", "head codes must be known and in increasing order"));
        };
        last = code;
        kinds.push(kind);
    }
    let needed: usize = kinds.iter().map(|&k| records(k)).sum();
    if walk.remaining() != needed + 1 {
        return Err(bad(&view, "data", "head codes disagree with the number of records"));
    }
    Ok(kinds)
}

/// The Needle 3 heads after `final_norm`; `rows` = num_layers + 1 (embedding, then each block).
pub(crate) fn read_v3<'a>(
    walk: &mut Walk<'a>,
    rows: u32,
    d_model: u32,
) -> Result<Vec<ProbeHeadTensors<'a>>> {
    let kinds = manifest(walk, HeadKind::from_code, HeadKind::records, 3)?;
    kinds.into_iter().map(|kind| read_v3_head(walk, kind, rows, d_model)).collect()
}

fn read_v3_head<'a>(
    walk: &mut Walk<'a>,
    kind: HeadKind,
    rows: u32,
    d_model: u32,
) -> Result<ProbeHeadTensors<'a>> {
    let name = |field| TensorName { scope: Scope::Head(kind.key()), field };
    let d = dim(d_model.into(), "must equal d_model");
    let rows_dim = dim(rows.into(), "must equal num_layers + 1");

    let probes = walk.take(name("probes"))?;
    let num_probes = if probes.dtype == DType::Cq {
        conform(&probes, Kind::Cq, &[free(&probes, 0), d])?;
        if probes.shape[0] % rows != 0 {
            return Err(bad(&probes, "shape[0]", "must be a multiple of num_layers + 1"));
        }
        probes.shape[0] / rows
    } else {
        conform(&probes, Kind::Float, &[rows_dim, free(&probes, 1), d])?;
        probes.shape[1]
    };
    let k = dim(num_probes.into(), "must equal the head's probe count");
    let gain = walk.expect(name("gain"), Kind::Float, &[rows_dim, k])?;

    let query = walk.take(name("query"))?;
    conform(&query, matrix_kind(&query), &[free(&query, 0), d])?;
    let num_queries = query.shape[0];
    let q = dim(num_queries.into(), "must equal the head's query count");
    let row_bias = walk.expect(name("row_bias"), Kind::Float, &[q, rows_dim, k])?;

    let proj = walk.take(name("proj"))?;
    let out = match kind.fixed_out() {
        Some(out) => dim(out.into(), "must equal the head's fixed output width"),
        None => free(&proj, 0),
    };
    let pooled = dim(product(&[num_queries, d_model], "d_model")?, "must equal queries * d_model");
    conform(&proj, matrix_kind(&proj), &[out, pooled])?;
    let out_dim = proj.shape[0];
    let bias = walk.expect(
        name("bias"),
        Kind::Float,
        &[dim(out_dim.into(), "must equal the head's output width")],
    )?;
    let calibration = match kind {
        HeadKind::Router => {
            Some(walk.expect(name("calibration"), Kind::Float, &[dim(3, "must be 3")])?)
        }
        HeadKind::Embedding | HeadKind::Confidence => None,
    };
    Ok(ProbeHeadTensors {
        kind,
        probes,
        gain,
        query,
        row_bias,
        proj,
        bias,
        calibration,
        num_probes,
        num_queries,
        out_dim,
    })
}

/// Head matrices are CQ in the current layout, FP16 in the older one.
fn matrix_kind(view: &TensorView<'_>) -> Kind {
    if view.dtype == DType::Cq {
        Kind::Cq
    } else {
        Kind::Float
    }
}

/// The Needle 2 heads after `final_norm`.
pub(crate) fn read_v2<'a>(walk: &mut Walk<'a>, d_model: u32) -> Result<Vec<V2ProbeHead<'a>>> {
    let kinds = manifest(walk, V2HeadKind::from_code, |_| V2_HEAD_RECORDS, 2)?;
    kinds.into_iter().map(|kind| read_v2_head(walk, kind, d_model)).collect()
}

fn read_v2_head<'a>(
    walk: &mut Walk<'a>,
    kind: V2HeadKind,
    d_model: u32,
) -> Result<V2ProbeHead<'a>> {
    let name = |field| TensorName { scope: Scope::Head(kind.key()), field };
    let probes = walk.take(name("probes"))?;
    conform(&probes, Kind::Float, &[free(&probes, 0), dim(d_model.into(), "must equal d_model")])?;
    let num_probes = probes.shape[0];
    let proj = walk.take(name("proj"))?;
    let out = match kind {
        V2HeadKind::Confidence => dim(1, "must be 1 (one confidence logit)"),
        V2HeadKind::Contrastive => free(&proj, 0),
    };
    let pooled = dim(product(&[num_probes, d_model], "d_model")?, "must equal probes * d_model");
    conform(&proj, Kind::Float, &[out, pooled])?;
    let out_dim = proj.shape[0];
    let bias = walk.expect(
        name("bias"),
        Kind::Float,
        &[dim(out_dim.into(), "must equal the head's output width")],
    )?;
    Ok(V2ProbeHead { kind, probes, proj, bias, num_probes, out_dim })
}
