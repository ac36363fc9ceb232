//! How a model is run, by name: [`LoadOptions`] and the one table ([`LOAD_OPTIONS`]) the wasm
//! `Session` (an options object as JSON), the CLI (its flags) and the surface-consistency test
//! read, beside the request's (options.rs). Defaults live in [`LoadOptions::default`].
//!
//! `context` is the session's capacity in tokens everywhere (the request's `maxTokens` is how
//! many a completion may take); the package's `Needle.load` spells it `maxContext` and the CLI
//! `--max-context`, as they did before this table. `gpu_kernels` is the package's `gpuKernels`;
//! the package refuses `"subgroup"`, which no browser build can run (pkg/engine/load.js).
use super::options::{bad, count, text, Kind};
use super::{KvPrecision, Numerics};
use crate::json::Value;
use crate::Result;

/// How a model is run. `None` fields take the container's own choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// KV-cache precision; default: int8 where the container declares `kv_bits = 8`.
    pub kv: Option<KvPrecision>,
    pub numerics: Numerics,
    /// Run a shallower ladder rung of this many layers (2..=num_layers).
    pub layers: Option<usize>,
    /// Session capacity in tokens (prompt + completion); default: the model's `max_seq_len`.
    /// The KV cache grows with the sequence up to this many tokens (a cap, not a reservation).
    pub context: Option<usize>,
    /// Where the forward pass runs (not in the table: the package picks it by build, the
    /// CLI by `--backend`).
    pub backend: Backend,
    /// The GPU backend's kernel shapes (`"plain"`, `"tiled"` or `"subgroup"`; read only by a
    /// GPU load); `None`: `NEEDLE_GPU_KERNELS` where the build reads an environment, else plain.
    pub gpu_kernels: Option<GpuKernels>,
}

/// The GPU backend's kernel variants (`src/gpu/README.md`), so that a device run compares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKernels {
    /// The first kernels: one invocation per output row and token, prefill in the CPU's chunks.
    Plain,
    /// Shaped for a GPU: decode's projections a workgroup per row block, prefill's tiles of
    /// rows x tokens decoding each code once per chunk, prefill chunks of up to 64 sized
    /// against the GPU memory bound (`gpu::tiled_chunk`).
    Tiled,
    /// Tiled, with decode's row sums a subgroup reduction: only on an adapter that offers
    /// subgroups (elsewhere the load is refused).
    Subgroup,
}

impl GpuKernels {
    /// Every variant.
    pub const ALL: [GpuKernels; 3] = [GpuKernels::Plain, GpuKernels::Tiled, GpuKernels::Subgroup];

    /// The variant's name, as the load option and `NEEDLE_GPU_KERNELS` spell it.
    pub fn name(self) -> &'static str {
        match self {
            GpuKernels::Plain => "plain",
            GpuKernels::Tiled => "tiled",
            GpuKernels::Subgroup => "subgroup",
        }
    }
}

/// Where a model's forward pass runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// This build's CPU kernels.
    #[default]
    Cpu,
    /// The GPU (`gpu` feature builds; Needle 3 with exact numerics only): no adapter is
    /// `GpuUnavailable`, Needle 2 or deploy numerics `Unsupported`.
    Gpu,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            kv: None,
            numerics: Numerics::Exact,
            layers: None,
            context: None,
            backend: Backend::Cpu,
            gpu_kernels: None,
        }
    }
}

/// One option of a load.
pub struct LoadOption {
    pub name: &'static str,
    pub kind: Kind,
    /// The CLI's flag.
    pub flag: &'static str,
    set: fn(&mut LoadOptions, &Value) -> Result<()>,
}

/// Every option a load takes by name.
pub const LOAD_OPTIONS: &[LoadOption] = &[
    LoadOption { name: "kv", kind: Kind::Text, flag: "--kv", set: |o, v| kv(v).map(|x| o.kv = x) },
    LoadOption {
        name: "numerics",
        kind: Kind::Text,
        flag: "--numerics",
        set: |o, v| numerics(v).map(|x| o.numerics = x),
    },
    LoadOption {
        name: "layers",
        kind: Kind::Count,
        flag: "--layers",
        set: |o, v| count("layers", v).map(|x| o.layers = Some(x)),
    },
    LoadOption {
        name: "context",
        kind: Kind::Count,
        flag: "--max-context",
        set: |o, v| count("context", v).map(|x| o.context = Some(x)),
    },
    LoadOption {
        name: "gpu_kernels",
        kind: Kind::Text,
        flag: "--gpu-kernels",
        set: |o, v| gpu_kernels(v).map(|x| o.gpu_kernels = Some(x)),
    },
];

impl LoadOptions {
    /// The options an object names (`{"kv": "f32", "context": 512}`) over the defaults; `null`
    /// means the default. An unknown name or a value of the wrong type is `invalid_argument`.
    pub fn from_options(object: &Value) -> Result<Self> {
        let Value::Object(members) = object else {
            return Err(bad("load", "expected an object of options"));
        };
        let mut options = LoadOptions::default();
        for (name, value) in members {
            let option = LOAD_OPTIONS
                .iter()
                .find(|o| o.name == name)
                .ok_or(bad("load", "unknown option (session::LOAD_OPTIONS lists them)"))?;
            if *value != Value::Null {
                (option.set)(&mut options, value)?;
            }
        }
        Ok(options)
    }
}

fn kv(v: &Value) -> Result<Option<KvPrecision>> {
    match text("kv", v)? {
        "f32" => Ok(Some(KvPrecision::F32)),
        "int8" => Ok(Some(KvPrecision::Int8)),
        _ => Err(bad("kv", "expected \"f32\" or \"int8\"")),
    }
}

fn numerics(v: &Value) -> Result<Numerics> {
    match text("numerics", v)? {
        "exact" => Ok(Numerics::Exact),
        "deploy" => Ok(Numerics::Deploy),
        _ => Err(bad("numerics", "expected \"exact\" or \"deploy\"")),
    }
}

fn gpu_kernels(v: &Value) -> Result<GpuKernels> {
    let name = text("gpu_kernels", v)?;
    GpuKernels::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or(bad("gpu_kernels", "expected \"plain\", \"tiled\" or \"subgroup\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use crate::Error;

    #[test]
    fn an_options_object_sets_what_it_names_and_keeps_the_defaults() {
        let v = json::parse(r#"{"kv":"f32","context":96,"numerics":null}"#).unwrap();
        let want =
            LoadOptions { kv: Some(KvPrecision::F32), context: Some(96), ..LoadOptions::default() };
        assert_eq!(LoadOptions::from_options(&v).unwrap(), want);
        let v = json::parse(r#"{"numerics":"deploy","layers":3,"kv":"int8"}"#).unwrap();
        let want = LoadOptions {
            kv: Some(KvPrecision::Int8),
            numerics: Numerics::Deploy,
            layers: Some(3),
            ..LoadOptions::default()
        };
        assert_eq!(LoadOptions::from_options(&v).unwrap(), want);
    }

    #[test]
    fn gpu_kernels_are_named_as_their_variants() {
        for kernels in GpuKernels::ALL {
            let v = json::parse(&alloc::format!(r#"{{"gpu_kernels":"{}"}}"#, kernels.name()));
            let want = LoadOptions { gpu_kernels: Some(kernels), ..LoadOptions::default() };
            assert_eq!(LoadOptions::from_options(&v.unwrap()).unwrap(), want);
        }
        let v = json::parse(r#"{"gpu_kernels":null}"#).unwrap();
        assert_eq!(LoadOptions::from_options(&v).unwrap().gpu_kernels, None);
    }

    #[test]
    fn unknown_and_mistyped_options_are_invalid_arguments() {
        for (text, name) in [
            (r#"{"maxContext":7}"#, "load"),
            (r#"{"backend":"gpu"}"#, "load"),
            (r#"{"kv":"f16"}"#, "kv"),
            (r#"{"kv":8}"#, "kv"),
            (r#"{"numerics":"fast"}"#, "numerics"),
            (r#"{"layers":-1}"#, "layers"),
            (r#"{"context":1.5}"#, "context"),
            (r#"{"context":"512"}"#, "context"),
            (r#"{"gpu_kernels":"fast"}"#, "gpu_kernels"),
            (r#"{"gpu_kernels":"Tiled"}"#, "gpu_kernels"),
            (r#"{"gpu_kernels":1}"#, "gpu_kernels"),
            (r#"[]"#, "load"),
        ] {
            let v = json::parse(text).unwrap();
            match LoadOptions::from_options(&v) {
                Err(Error::InvalidArgument { name: got, .. }) => assert_eq!(got, name, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
