//! The tiled kernels' prefill chunk, sized against issue 48's GPU memory bound: the largest of
//! [`CHUNKS`] whose buffers (`cost::footprint`, what `Runner::new` allocates) stay within
//! [`MEMORY_BOUND`] times the container. A token of chunk costs its activations, its logits row
//! and probe cells twice (activations and readback) and a KV ring slot a layer: 0.36 MB at the
//! shipped geometry, where a chunk of 64 was 1.48x the container. Where no chunk fits (a small
//! model whose state for its whole context outweighs its weights) the smallest is taken: the
//! CPU's chunk, plain's, which the bound cannot ask to shrink further.
use super::cost;
use super::variant::TILED_CHUNK;
use crate::v3::{Model, Options};
use crate::Result;

/// GPU memory over the container's bytes that a larger chunk must stay within.
pub const MEMORY_BOUND: f64 = 1.3;

/// The candidate chunks, largest first: one token tile (a chunk reads each weight once) down to
/// the CPU's 16, in steps of 8.
pub const CHUNKS: [usize; 7] = [TILED_CHUNK, 56, 48, 40, 32, 24, 16];

/// The prefill chunk of the tiled kernels for `model` (over its container `bytes`) under
/// `options` (all but its chunk).
pub fn tiled_chunk<'a>(bytes: &'a [u8], model: &Model<'a>, options: &Options) -> Result<usize> {
    largest_within(MEMORY_BOUND * bytes.len() as f64, |b| {
        Ok(cost::footprint(bytes, model, &Options { prefill_chunk: b, ..*options })?.2)
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::container::V3Container;

    /// The chunk taken is the largest whose buffers fit the bound, over the default model's
    /// own footprints; the default model itself fits none (its floats and 1,024-token state
    /// alone are over 1.3x its 0.74 MB), so it takes 16.
    #[test]
    fn the_tiled_chunk_is_the_largest_within_the_memory_bound() {
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact")).unwrap();
        let c = V3Container::parse(&bytes).unwrap();
        let model = Model::new(&c).unwrap();
        let options = model.default_options();
        let at =
            |b| Ok(cost::footprint(&bytes, &model, &Options { prefill_chunk: b, ..options })?.2);
        let f = |b| at(b).unwrap() as f64;
        for w in CHUNKS.windows(2) {
            assert!(f(w[0]) > f(w[1]), "a larger chunk costs more: {w:?}");
        }
        assert_eq!(largest_within(f(64), at).unwrap(), 64);
        assert_eq!(largest_within((f(32) + f(40)) / 2.0, at).unwrap(), 32);
        assert_eq!(largest_within(f(16) - 1.0, at).unwrap(), 16);
        assert!(f(16) > MEMORY_BOUND * bytes.len() as f64);
        assert_eq!(tiled_chunk(&bytes, &model, &options).unwrap(), 16);
    }
}
