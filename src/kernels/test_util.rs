//! Shared helpers for the kernel tests: deterministic inputs and naive references.
use super::cq::{CqMatrix, CqWidth};
use super::hadamard::orthonormal_scale;

/// Deterministic values in [-2, 2) (xorshift32).
pub(crate) fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32) * 4.0 - 2.0
        })
        .collect()
}

/// Deterministic bytes (xorshift32).
pub(crate) fn pseudo_random_bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2_246_822_519).wrapping_add(3);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 24) as u8
        })
        .collect()
}

/// Upstream's `_cq_hadamard_np(n)` as a dense row-major matrix: Sylvester blocks
/// `[[H, H], [H, -H]]` divided by sqrt(n), in f32.
pub(crate) fn explicit_hadamard(n: usize) -> Vec<f32> {
    let s = orthonormal_scale(n);
    let mut h = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            let sign = if (i & j).count_ones() % 2 == 0 { 1.0 } else { -1.0 };
            h[i * n + j] = sign * s;
        }
    }
    h
}

/// Equal as floats, or both NaN.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) fn same(a: f32, b: f32) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// A synthetic CQ matrix with random codes, FP16 norms in [2^-3, 2^2) and a random codebook
/// (the A8 tests, the kernel micro-benchmarks and the container's CQ views; its parts open to
/// tests that set or reassemble them).
pub(crate) struct RandomCq {
    rows: usize,
    cols: usize,
    group: usize,
    width: CqWidth,
    pub(crate) packed: Vec<u8>,
    pub(crate) norms: Vec<u8>,
    pub(crate) levels: Vec<f32>,
}

impl RandomCq {
    pub(crate) fn new(rows: usize, cols: usize, group: usize, width: CqWidth, seed: u32) -> Self {
        let cp = cols.div_ceil(group) * group;
        let packed = pseudo_random_bytes(rows * cp * width.code_bits() / 8, seed);
        // Ternary crumbs 0, 1, 3 only (2 is refused): clear the high bit of every crumb 2.
        let packed = if width == CqWidth::Ternary {
            packed.iter().map(|&b| b & !(((b >> 1) & !b & 0x55) << 1)).collect()
        } else {
            packed
        };
        let norms = pseudo_random_bytes(rows * cp / group * 2, seed ^ 0xabc)
            .chunks_exact(2)
            .flat_map(|p| (0x3000u16 + (u16::from_le_bytes([p[0], p[1]]) % 0x1400)).to_le_bytes())
            .collect();
        let root_g = (group as f32).sqrt();
        let levels =
            pseudo_random(width.header_levels(), seed ^ 0x55).iter().map(|v| v / root_g).collect();
        RandomCq { rows, cols, group, width, packed, norms, levels }
    }

    pub(crate) fn matrix(&self) -> CqMatrix<'_> {
        CqMatrix::from_parts(
            self.rows,
            self.cols,
            self.group,
            self.width,
            &self.packed,
            &self.norms,
            &self.levels,
        )
        .unwrap()
    }
}
