//! The kernel variants ([`GpuKernels`]): the pipeline and grid each recorded dispatch runs as.
//! Only the CQ projections have a second form. `plain` runs `matmul` (cq.wgsl: an invocation per
//! output row and token); `tiled` runs `matvec_tiled` over one token (decode, and the head of a
//! prefill) and `matmul_tiled` over more (cq_tiled.wgsl), and prefills in chunks of up to one
//! token tile (`chunk.rs`); `subgroup` is tiled with `matvec_subgroup` (cq_subgroup.wgsl) for
//! one token. The cost of each is modeled in `cost.rs`.
use super::device::{Kernel, WORKGROUP};
use super::program::{workgroups, Dispatch};
use crate::session::GpuKernels;
use crate::{Error, Result};

/// Rows of a `matvec_tiled` workgroup (cq_tiled.wgsl `MV_ROWS`).
pub(crate) const MATVEC_ROWS: u32 = 4;
/// Rows and tokens of a `matmul_tiled` tile (`MM_ROWS`, `MM_TOKENS`).
pub(crate) const TILE_ROWS: u32 = 16;
pub(crate) const TILE_TOKENS: u32 = 64;
/// The GPU's largest prefill chunk under the tiled kernels: one token tile, so that a chunk
/// reads each weight once.
pub const TILED_CHUNK: usize = TILE_TOKENS as usize;
/// Most workgroups along one grid dimension (WebGPU's guaranteed limit).
const MAX_GROUPS: u32 = 65535;

/// `NEEDLE_GPU_KERNELS` (`plain`, `tiled` or `subgroup`; plain where it is unset or the build
/// reads no environment); another value is refused rather than ignored.
pub fn from_env() -> Result<GpuKernels> {
    match std::env::var("NEEDLE_GPU_KERNELS").as_deref() {
        Err(_) | Ok("plain") => Ok(GpuKernels::Plain),
        Ok("tiled") => Ok(GpuKernels::Tiled),
        Ok("subgroup") => Ok(GpuKernels::Subgroup),
        Ok(_) => Err(Error::InvalidArgument {
            name: "NEEDLE_GPU_KERNELS",
            reason: "expected \"plain\", \"tiled\" or \"subgroup\"",
        }),
    }
}

/// `Unsupported` when a projection of `rows` rows has more row tiles than one grid dimension
/// holds (`matmul_tiled` puts them along x).
pub(crate) fn check_rows(rows: usize) -> Result<()> {
    if rows.div_ceil(TILE_ROWS as usize) > MAX_GROUPS as usize {
        return Err(Error::Unsupported { what: "a GPU projection of more than 1,048,560 rows" });
    }
    Ok(())
}

/// The pipeline and workgroup grid of `d` over `tokens` tokens.
pub(crate) fn grid(kernels: GpuKernels, d: &Dispatch, tokens: u32) -> (Kernel, (u32, u32)) {
    // `matvec_subgroup` takes `matvec_tiled`'s grid: a workgroup per MATVEC_ROWS rows.
    let row_blocks = workgroups(d.per_token.div_ceil(MATVEC_ROWS) * WORKGROUP);
    match (kernels, d.kernel) {
        (GpuKernels::Tiled, Kernel::Matmul) if tokens == 1 => (Kernel::MatvecTiled, row_blocks),
        (GpuKernels::Subgroup, Kernel::Matmul) if tokens == 1 => {
            (Kernel::MatvecSubgroup, row_blocks)
        }
        (GpuKernels::Tiled | GpuKernels::Subgroup, Kernel::Matmul) => {
            (Kernel::MatmulTiled, (d.per_token.div_ceil(TILE_ROWS), tokens.div_ceil(TILE_TOKENS)))
        }
        _ => (d.kernel, workgroups(d.per_token * tokens)),
    }
}
