//! Names for directory positions. The file stores none; the canon walk knows what each position
//! holds and names it the way upstream's exporter does (`layer03.q_proj`, `engram0.tables`).
use core::fmt;

use super::tensor::TensorView;

/// What part of the model a tensor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Model-wide (`embedding`, `mhc_a_pre`, `final_norm`, `heads.manifest`, `tokenizer`).
    Model,
    Layer(u32),
    /// Engram site by site index (not layer).
    Engram(u32),
    /// A probe head, by upstream's parameter key (`confidence_head`).
    Head(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorName {
    pub scope: Scope,
    pub field: &'static str,
}

impl TensorName {
    pub(crate) const fn model(field: &'static str) -> Self {
        Self { scope: Scope::Model, field }
    }
}

impl fmt::Display for TensorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scope {
            Scope::Model => f.write_str(self.field),
            Scope::Layer(i) => write!(f, "layer{i:02}.{}", self.field),
            Scope::Engram(s) => write!(f, "engram{s}.{}", self.field),
            Scope::Head(key) => write!(f, "{key}.{}", self.field),
        }
    }
}

/// A directory entry with the name its canon position gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamedTensor<'a> {
    pub name: TensorName,
    pub view: TensorView<'a>,
}
