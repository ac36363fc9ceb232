//! The Walsh-MLP permutations are stored as floats but used as indices: check that each one
//! really is a permutation of `0..n` so a runtime can index with it unchecked.
use alloc::vec;

use super::tensor::TensorView;
use crate::{Error, Result};

pub(crate) fn check(view: &TensorView<'_>) -> Result<()> {
    let n = view.numel();
    // Sized by the tensor, whose bytes exist in the input.
    let mut seen = vec![false; n];
    for value in view.float_values() {
        let slot = (value >= 0.0 && value < n as f32 && value == (value as usize) as f32)
            .then_some(value as usize);
        match slot.and_then(|i| seen.get_mut(i)) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::BadTensor {
                    index: view.index,
                    field: "data",
                    reason: "not a permutation of 0..hada_n",
                })
            }
        }
    }
    Ok(())
}
