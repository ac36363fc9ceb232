//! Generation-agnostic math kernels.
//!
//! One folder per kernel family (`cq/`, `cq_a8/`, `vector/`, `hadamard/`, `softmax/`,
//! `activation/`, `dense/`): `mod.rs` holds the public functions, the scalar version (always
//! compiled; the reference) and the one dispatch point (`dispatch!`); beside it sit the
//! variants, named by instruction set (`simd128.rs`, `avx2.rs`, `avx512.rs`, `sse2.rs`,
//! `avx.rs`), and the family's `tests.rs` / `bench.rs`. Single-file kernels (norm, rope, quant,
//! f16, sinkhorn) have no variants.
//!
//! Each hot kernel has a wasm32 SIMD128 twin (`simd128.rs`): the dispatch point calls it when
//! built with `target_feature = "simd128"` on wasm32, the scalar version otherwise. Twins
//! follow the same operation order and are bit-identical to their scalar versions; tests gated on
//! simd128 hold them equal. They run on wasm32 under Node's WASI with the real SIMD code:
//!
//! ```text
//! rustup target add wasm32-wasip1
//! CARGO_TARGET_DIR=target/wasi-simd RUSTFLAGS="-C target-feature=+simd128" \
//!   CARGO_TARGET_WASM32_WASIP1_RUNNER="node tools/wasi-run.mjs" \
//!   cargo test --target wasm32-wasip1 --lib kernels::
//! ```
//!
//! (The same command without RUSTFLAGS runs the scalar kernels on wasm32.)
//!
//! Parallel work goes through one seam, [`parallel`]: serial without the `threads` feature, split
//! across a rayon pool with it (each item still computed by the same serial code, so results are
//! bit-identical).
//!
//! Natively with `std` on x86-64, the CQ kernels also have an AVX2 variant (`cq/avx2.rs`) and,
//! for one input, an AVX-512 one (`cq/avx512.rs`), chosen at run time by CPU feature detection
//! ahead of the compile-time choice (the `x86:` arm of `dispatch!`); they are held equal to
//! the scalar kernel the same way. So are the A8 integer CQ kernel's AVX2 variant
//! (`cq_a8/avx2.rs`), the one place that kernel runs outside the tests (see `cq_a8`), and
//! attention's weighted sum of int8 values, AVX-512 or AVX2 (`vector/avx.rs`). The int8 row dot
//! product has an SSE2 variant (`vector/sse2.rs`, on every x86-64), where the compiler's own
//! vectorisation of the scalar loop is poor.

/// The one dispatch point of a kernel, the same shape in every family: natively on x86-64 (with
/// `std`, for run-time feature detection) an optional variant first, `x86: expr` running it and
/// saying whether it ran (the CPU had its features); then, chosen at compile time, the simd128
/// twin on wasm32 builds with the feature, the scalar version elsewhere (or the one portable
/// version of a kernel without a twin).
macro_rules! dispatch {
    (x86: $x86:expr; $($rest:tt)*) => {{
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        if $x86 {
            return;
        }
        dispatch!($($rest)*)
    }};
    ($portable:path; $($arg:expr),*) => {
        $portable($($arg),*)
    };
    ($simd:path, $scalar:path, $($arg:expr),*) => {{
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let r = $simd($($arg),*);
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        let r = $scalar($($arg),*);
        r
    }};
}

pub mod activation;
pub mod cq;
pub mod cq_a8;
pub mod dense;
pub mod f16;
pub mod hadamard;
pub mod norm;
pub mod parallel;
pub mod quant;
pub mod rope;
pub mod sinkhorn;
pub mod softmax;
pub mod vector;

/// Whether the CPU has the AVX-512 subsets the AVX-512 variants use (F; BW and VL for byte
/// shuffles and masked 16-byte loads).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
pub(crate) fn has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
}

#[cfg(test)]
pub(crate) mod test_util;
#[cfg(test)]
mod testdata;

pub use cq::{CqMatrix, CqWidth};
pub use cq_a8::rotate_a8;
pub use hadamard::fwht;
pub use norm::{inv_rms, rms_norm, rms_unit};
pub use quant::{fake_quant_i8, quantize_i8};
pub use softmax::softmax;
pub use vector::{
    axpy, axpy_i8, axpy_i8_keys, axpy_i8_rows, dot, dot_i8, dot_i8_i8, dot_i8_i8_rows,
};
