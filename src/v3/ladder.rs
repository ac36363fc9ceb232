//! Depth rungs: which blocks a shallower deployment of the model runs.
//!
//! Upstream (`ladder_layer_indices`) keeps both end blocks and adds interior blocks one at a time,
//! each at the midpoint of the widest remaining gap (ties go to the leftmost gap), so every rung is
//! a subset of the next one. A rung of depth `d` runs the first `d` blocks of that order, in layer
//! order. The container does not carry a custom order, so the bisection order is the only one.
use alloc::vec::Vec;

use crate::{Error, Result};

/// The bisection order of `num_layers` blocks (upstream's `_ladder_layer_order`).
pub fn ladder_order(num_layers: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(num_layers);
    if num_layers == 0 {
        return order;
    }
    order.push(0);
    if num_layers == 1 {
        return order;
    }
    order.push(num_layers - 1);
    let mut selected = order.clone();
    while order.len() < num_layers {
        crate::sort::sort(&mut selected);
        // Widest gap with room for a block in between; `>` keeps the leftmost on ties.
        let mut best: Option<(usize, usize)> = None;
        for pair in selected.windows(2) {
            let (left, right) = (pair[0], pair[1]);
            if right - left > 1 && best.is_none_or(|(l, r)| right - left > r - l) {
                best = Some((left, right));
            }
        }
        let Some((left, right)) = best else { break };
        let mid = (left + right) / 2;
        selected.push(mid);
        order.push(mid);
    }
    order
}

/// The layer indices (ascending) a rung of `depth` blocks runs.
pub fn ladder_layer_indices(num_layers: usize, depth: usize) -> Result<Vec<usize>> {
    if depth < 2 || depth > num_layers {
        return Err(Error::InvalidArgument {
            name: "depth",
            reason: "must be between 2 and the number of layers",
        });
    }
    let mut layers = ladder_order(num_layers);
    layers.truncate(depth);
    crate::sort::sort(&mut layers);
    Ok(layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_layer_order_bisects_the_widest_gap_leftmost_first() {
        // Upstream's _ladder_layer_order(20).
        assert_eq!(
            ladder_order(20),
            [0, 19, 9, 14, 4, 6, 11, 16, 2, 7, 12, 17, 1, 3, 5, 8, 10, 13, 15, 18]
        );
    }

    #[test]
    fn every_order_is_a_permutation_of_the_layers() {
        for n in 1..40 {
            let mut order = ladder_order(n);
            order.sort_unstable();
            assert_eq!(order, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn rungs_are_nested_and_keep_both_end_blocks() {
        let mut previous: Vec<usize> = Vec::new();
        for depth in 2..=20 {
            let rung = ladder_layer_indices(20, depth).unwrap();
            assert_eq!(rung.len(), depth);
            assert_eq!((rung[0], rung[depth - 1]), (0, 19));
            assert!(previous.iter().all(|l| rung.contains(l)));
            previous = rung;
        }
    }

    #[test]
    fn depths_outside_two_to_num_layers_are_refused() {
        assert!(ladder_layer_indices(20, 1).is_err());
        assert!(ladder_layer_indices(20, 21).is_err());
        assert!(ladder_layer_indices(5, 5).is_ok());
    }
}
