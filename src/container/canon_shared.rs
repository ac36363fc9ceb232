//! Canon pieces both generations lay out the same way: the embedding, the mHC block and the
//! Engram sites.
use super::codebooks::Codebooks;
use super::directory;
use super::header::{bad as bad_header, Core, EngramFields};
use super::names::{Scope, TensorName};
use super::tensor::TensorView;
use super::walk::{dim, product, Dim, Kind, Walk};
use super::Generation;
use crate::{Error, Result};

/// One Engram site: `tables (num_tables * slots, sub_dim)`, key/value projections
/// `(d_model, num_tables * sub_dim)`, conv `taps (engram_conv_taps, d_model)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngramSite<'a> {
    pub tables: TensorView<'a>,
    pub key_proj: TensorView<'a>,
    pub value_proj: TensorView<'a>,
    pub taps: TensorView<'a>,
}

/// The nine stacked mHC tensors, in file order: `a_*` are `(L,)`; `b_pre`, `b_post`
/// `(L, lanes)`; `b_res` `(L, lanes, lanes)`; the `phi_*` projections are CQ with `L * lanes`
/// rows (`L * lanes^2` for `phi_res`) over `lanes * d_model`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MhcTensors<'a> {
    pub a_pre: TensorView<'a>,
    pub a_post: TensorView<'a>,
    pub a_res: TensorView<'a>,
    pub b_pre: TensorView<'a>,
    pub b_post: TensorView<'a>,
    pub b_res: TensorView<'a>,
    pub phi_pre: TensorView<'a>,
    pub phi_post: TensorView<'a>,
    pub phi_res: TensorView<'a>,
}

/// Refuses a container of the other generation.
pub(crate) fn expect_generation(input: &[u8], expected: Generation) -> Result<()> {
    let found = super::generation_of(input)?;
    if found != expected {
        return Err(Error::WrongGeneration { expected: expected.number(), found: found.number() });
    }
    Ok(())
}

/// Refuses a header whose `num_tensors` is not the records through `final_norm`, plus those of
/// one of the head sets the generation writes (`head_extras`), plus the tokenizer.
pub(crate) fn check_count(
    through_final_norm: u64,
    head_extras: &[u64],
    num_tensors: u32,
) -> Result<()> {
    let base = through_final_norm + 1;
    if !head_extras.iter().any(|&extra| base + extra == u64::from(num_tensors)) {
        return Err(bad_header(
            "num_tensors",
            num_tensors.into(),
            "does not match the tensor count the geometry implies",
        ));
    }
    Ok(())
}

/// The codebooks that follow the header, and a walk over the directory that follows them.
pub(crate) fn records<'a>(
    input: &'a [u8],
    header_len: u64,
    codebook_len: u32,
    num_tensors: u32,
    widths: &[u32],
) -> Result<(Codebooks, Walk<'a>)> {
    let codebooks = Codebooks::read(input, header_len)?;
    let dir_start = header_len + u64::from(codebook_len) * 4;
    let views = directory::read(input, dir_start, num_tensors, widths)?;
    Ok((codebooks, Walk::new(views)))
}

/// Expected shapes of the shared pieces, computed once with overflow checks.
pub(crate) struct Stack {
    pub d: Dim,
    pub engram_sites: u32,
    vocab: Dim,
    layers: Dim,
    lanes: Dim,
    phi_rows: Dim,
    phi_res_rows: Dim,
    phi_cols: Dim,
    table_rows: Dim,
    sub_dim: Dim,
    engram_in: Dim,
    engram_taps: Dim,
}

impl Stack {
    pub(crate) fn new<const N: usize>(g: &Core, e: &EngramFields<N>) -> Result<Self> {
        Ok(Self {
            d: dim(g.d_model.into(), "must equal d_model"),
            engram_sites: e.num_sites,
            vocab: dim(g.vocab.into(), "must equal vocab_size"),
            layers: dim(g.num_layers.into(), "must equal num_layers"),
            lanes: dim(g.mhc_lanes.into(), "must equal mhc_lanes"),
            phi_rows: dim(
                product(&[g.num_layers, g.mhc_lanes], "mhc_lanes")?,
                "must equal num_layers * mhc_lanes",
            ),
            phi_res_rows: dim(
                product(&[g.num_layers, g.mhc_lanes, g.mhc_lanes], "mhc_lanes")?,
                "must equal num_layers * mhc_lanes^2",
            ),
            phi_cols: dim(
                product(&[g.mhc_lanes, g.d_model], "mhc_lanes")?,
                "must equal mhc_lanes * d_model",
            ),
            table_rows: dim(
                product(&[e.num_tables, e.slots], "engram_slots")?,
                "must equal num_engram_tables * engram_slots",
            ),
            sub_dim: dim(e.sub_dim.into(), "must equal engram_sub_dim"),
            engram_in: dim(
                product(&[e.num_tables, e.sub_dim], "engram_sub_dim")?,
                "must equal num_engram_tables * engram_sub_dim",
            ),
            engram_taps: dim(e.conv_taps.into(), "must equal engram_conv_taps"),
        })
    }

    /// `(vocab, d_model)` CQ, tied with the output head.
    pub(crate) fn embedding<'a>(&self, w: &mut Walk<'a>) -> Result<TensorView<'a>> {
        w.expect(TensorName::model("embedding"), Kind::Cq, &[self.vocab, self.d])
    }

    pub(crate) fn mhc<'a>(&self, w: &mut Walk<'a>) -> Result<MhcTensors<'a>> {
        let m = TensorName::model;
        let (l, lanes) = (self.layers, self.lanes);
        Ok(MhcTensors {
            a_pre: w.expect(m("mhc_a_pre"), Kind::Float, &[l])?,
            a_post: w.expect(m("mhc_a_post"), Kind::Float, &[l])?,
            a_res: w.expect(m("mhc_a_res"), Kind::Float, &[l])?,
            b_pre: w.expect(m("mhc_b_pre"), Kind::Float, &[l, lanes])?,
            b_post: w.expect(m("mhc_b_post"), Kind::Float, &[l, lanes])?,
            b_res: w.expect(m("mhc_b_res"), Kind::Float, &[l, lanes, lanes])?,
            phi_pre: w.expect(m("mhc_phi_pre"), Kind::Cq, &[self.phi_rows, self.phi_cols])?,
            phi_post: w.expect(m("mhc_phi_post"), Kind::Cq, &[self.phi_rows, self.phi_cols])?,
            phi_res: w.expect(m("mhc_phi_res"), Kind::Cq, &[self.phi_res_rows, self.phi_cols])?,
        })
    }

    pub(crate) fn engram_site<'a>(&self, w: &mut Walk<'a>, s: u32) -> Result<EngramSite<'a>> {
        let name = |field| TensorName { scope: Scope::Engram(s), field };
        Ok(EngramSite {
            tables: w.expect(name("tables"), Kind::Cq, &[self.table_rows, self.sub_dim])?,
            key_proj: w.expect(name("key_proj"), Kind::Cq, &[self.d, self.engram_in])?,
            value_proj: w.expect(name("value_proj"), Kind::Cq, &[self.d, self.engram_in])?,
            taps: w.expect(name("taps"), Kind::Float, &[self.engram_taps, self.d])?,
        })
    }

    /// `(d_model,)`
    pub(crate) fn final_norm<'a>(&self, w: &mut Walk<'a>) -> Result<TensorView<'a>> {
        w.expect(TensorName::model("final_norm"), Kind::Float, &[self.d])
    }
}
