//! Needle 3 on the GPU backend ([`crate::gpu`], which imports no generation): its MLP as the
//! backend's kernels read it, its options as the sequence shape the pass is recorded for, and
//! [`Needle3Gpu`], a Needle 3 container loaded onto the first adapter.
use alloc::vec::Vec;

use super::mlp::{HadamardMlp, Permutations};
use super::state::{Model, Needle3, Options, State};
use crate::container::{HeadKind, V3Container};
use crate::gpu::{self, GpuGeneration, GpuMlp, GpuModel, Hadamard, Kron, Shape};
use crate::session::GpuKernels;
use crate::Result;

/// A Needle 3 model and one sequence on the GPU.
pub type Needle3Gpu<'a> = GpuModel<'a, Needle3>;

impl GpuMlp for HadamardMlp {
    fn hadamard(&self) -> Hadamard<'_> {
        let kron = |i: usize| Kron { fa: &self.stages[i].fa, fb: &self.stages[i].fb };
        Hadamard {
            d1: &self.d1,
            d2: &self.d2,
            b2: &self.b2,
            d3: &self.d3,
            d4: &self.d4,
            stages: [kron(0), kron(1), kron(2)],
            cond_vt: &self.cond_vt,
            cond_u: &self.cond_u,
            rank: self.rank,
            a: self.a,
            b: self.b,
        }
    }

    fn permutations(shared: &Permutations) -> [&[u32]; 2] {
        [&shared.p1, &shared.p2]
    }
}

impl GpuGeneration for Needle3 {
    fn shape(options: &Options) -> Shape {
        Shape {
            kv: options.kv,
            numerics: options.numerics,
            capacity: options.max_tokens,
            chunk: options.prefill_chunk,
        }
    }

    fn with_chunk(options: &Options, chunk: usize) -> Options {
        Options { prefill_chunk: chunk, ..*options }
    }

    fn new_state(model: &Model<'_>, options: &Options) -> Result<State> {
        model.new_state(options)
    }
}

impl<'a> Needle3Gpu<'a> {
    /// The model in `bytes` (a Needle 3 container) on the first GPU adapter, with a sequence
    /// made from `options`, on the kernels `NEEDLE_GPU_KERNELS` names
    /// ([`gpu::kernels_from_env`]). Deploy numerics are refused (CPU only for now).
    pub fn load(bytes: &'a [u8], options: &Options) -> Result<Self> {
        Self::load_with(bytes, options, gpu::kernels_from_env()?)
    }

    /// [`Self::load`] on the given kernel variant (prefill chunks stay `options.prefill_chunk`).
    pub fn load_with(bytes: &'a [u8], options: &Options, kernels: GpuKernels) -> Result<Self> {
        let c = V3Container::parse(bytes)?;
        Self::from_model(bytes, Model::new(&c)?, options, kernels)
    }

    /// A probe head's output over the sequence (see [`Model::head`]).
    pub fn head(&self, kind: HeadKind) -> Result<Vec<f32>> {
        self.model().head(self.state(), kind)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::gpu::{cost, tiled_chunk, CHUNKS, MEMORY_BOUND, TILED_CHUNK};

    fn default_model() -> std::vec::Vec<u8> {
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact")).unwrap()
    }

    /// The tiled chunk over the default model's own footprints: a larger chunk costs more GPU
    /// memory, and the default model fits none within the bound (its floats and 1,024-token
    /// state alone are over 1.3x its 0.74 MB), so it takes the smallest, 16.
    #[test]
    fn the_default_model_takes_the_smallest_tiled_chunk() {
        let bytes = default_model();
        let c = V3Container::parse(&bytes).unwrap();
        let model = Model::new(&c).unwrap();
        let options = model.default_options();
        let device_bytes = |b| {
            let o = Options { prefill_chunk: b, ..options };
            let report = cost::model(&bytes, &model, &o, GpuKernels::Tiled, 1).unwrap();
            report.device_bytes as f64
        };
        for w in CHUNKS.windows(2) {
            assert!(device_bytes(w[0]) > device_bytes(w[1]), "a larger chunk costs more: {w:?}");
        }
        assert!(device_bytes(16) > MEMORY_BOUND * bytes.len() as f64);
        assert_eq!(tiled_chunk(&bytes, &model, &options).unwrap(), 16);
    }

    /// The MLP kernels against `HadamardMlp::forward` on the default model's first and last
    /// blocks, 3 tokens each (`gpu::twins::check_mlp`).
    #[test]
    fn the_mlp_kernels_equal_the_cpu_hadamard_mlp() {
        if !gpu::adapter_or_skip() {
            return;
        }
        let bytes = default_model();
        let c = V3Container::parse(&bytes).unwrap();
        let model = Model::new(&c).unwrap();
        let s = &model.stack;
        let x = crate::kernels::test_util::pseudo_random(3 * s.d_model, 41);
        for l in [s.layers.first(), s.layers.last()].into_iter().flatten() {
            gpu::twins::check_mlp(&l.mlp, &s.mlp_shared, &x, s.d_model);
        }
    }

    /// Issue 48's byte targets on the default model, which the tiled kernels meet and the plain
    /// ones do not: the projections' weights read at most 1.25x their size a prefill chunk and
    /// 1.1x a decode token; the same arithmetic either way.
    #[test]
    fn tiled_reads_each_projection_once_a_chunk_where_plain_reads_it_once_a_token() {
        let bytes = default_model();
        let c = V3Container::parse(&bytes).unwrap();
        let model = Model::new(&c).unwrap();
        let base = model.default_options();
        let plain = cost::model(&bytes, &model, &base, GpuKernels::Plain, 964).unwrap();
        let tiled_options = Options { prefill_chunk: TILED_CHUNK, ..base };
        let tiled = cost::model(&bytes, &model, &tiled_options, GpuKernels::Tiled, 964).unwrap();
        let reads = |c: &cost::Cost| c.projection_bytes as f64 / c.projection_once as f64;
        assert!(reads(&tiled.chunk_cost) <= 1.25, "{}", reads(&tiled.chunk_cost));
        assert!(reads(&tiled.decode) <= 1.1, "{}", reads(&tiled.decode));
        assert!(reads(&plain.chunk_cost) > 15.0, "{}", reads(&plain.chunk_cost));
        assert_eq!(plain.prompt.madds, tiled.prompt.madds);
        assert_eq!(tiled.prompt.submissions, 964u64.div_ceil(64));
    }
}
