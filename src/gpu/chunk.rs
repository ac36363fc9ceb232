//! The tiled kernels' prefill chunk, sized against issue 48's GPU memory bound: the largest of
//! [`CHUNKS`] whose buffers (`cost::footprint`, what `Runner::new` allocates) stay within
//! [`MEMORY_BOUND`] times the container. A token of chunk costs its activations, its logits row
//! and probe cells twice (activations and readback) and a KV ring slot a layer: 0.36 MB at the
//! shipped geometry, where a chunk of 64 was 1.48x the container. Where no chunk fits (a small
//! model whose state for its whole context outweighs its weights) the smallest is taken: the
//! CPU's chunk, plain's, which the bound cannot ask to shrink further.
use super::cost;
use super::generation::GpuGeneration;
use super::variant::TILED_CHUNK;
use crate::blocks::model::Model;
use crate::Result;

/// GPU memory over the container's bytes that a larger chunk must stay within.
pub const MEMORY_BOUND: f64 = 1.3;

/// The candidate chunks, largest first: one token tile (a chunk reads each weight once) down to
/// the CPU's 16, in steps of 8.
pub const CHUNKS: [usize; 7] = [TILED_CHUNK, 56, 48, 40, 32, 24, 16];

/// The prefill chunk of the tiled kernels for `model` (over its container `bytes`) under
/// `options` (all but its chunk).
pub fn tiled_chunk<'a, G: GpuGeneration>(
    bytes: &'a [u8],
    model: &Model<'a, G>,
    options: &G::Options,
) -> Result<usize> {
    largest_within(MEMORY_BOUND * bytes.len() as f64, |b| {
        Ok(cost::footprint(bytes, model, &G::with_chunk(options, b))?.2)
    })
}

/// The largest of [`CHUNKS`] whose `device_bytes` are within `bound`, else the smallest.
fn largest_within(bound: f64, mut device_bytes: impl FnMut(usize) -> Result<u64>) -> Result<usize> {
    for b in CHUNKS {
        if device_bytes(b)? as f64 <= bound {
            return Ok(b);
        }
    }
    Ok(CHUNKS[CHUNKS.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk taken is the largest whose bytes fit the bound, else the smallest; a footprint
    /// that fails fails the choice. (The default model's own footprints: `v3/gpu.rs`.)
    #[test]
    fn the_chunk_taken_is_the_largest_within_the_bound() {
        let bytes = |b: usize| Ok(1000 + 10 * b as u64);
        assert_eq!(largest_within(1640.0, bytes).unwrap(), 64);
        assert_eq!(largest_within(1639.0, bytes).unwrap(), 56);
        assert_eq!(largest_within(1360.0, bytes).unwrap(), 32);
        assert_eq!(largest_within(1159.0, bytes).unwrap(), 16);
        let refused = crate::Error::Unsupported { what: "test" };
        assert!(largest_within(1e9, |_| Err(refused.clone())).is_err());
    }
}
