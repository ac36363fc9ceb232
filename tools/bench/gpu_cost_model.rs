//! The GPU pass's cost model (src/gpu/cost.rs), **modeled, not measured**: weight and other
//! bytes, multiply-adds, dispatches and a roofline time on three reference GPUs, per prefill
//! chunk, per prompt and per decode token, for the plain and the tiled kernels (the subgroup
//! ones read and compute what the tiled ones do: the model sees no difference). Needs no GPU.
//!
//!     cargo run --release --features gpu --example gpu_cost_model -- [MODEL.cact] [--prompt N]
//!
//! MODEL defaults to the embedded default model (www/models/default.cact); N to 964 tokens.
//! The model runs as the session loads it: the container's KV precision, its whole capacity,
//! the probe heads pooled when it carries any; plain in the CPU's chunks, tiled in chunks of 64
//! (a whole token tile) and in the chunk the session takes (`gpu::tiled_chunk`: the largest of
//! 64 .. 16 within 1.3x the container).
use needle_web::container::V3Container;
use needle_web::gpu::{cost, tiled_chunk, TILED_CHUNK};
use needle_web::session::GpuKernels;
use needle_web::v3::Model;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut path = concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact").to_owned();
    let mut prompt = 964;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--prompt" => prompt = args.next().ok_or("--prompt N")?.parse()?,
            _ => path = a,
        }
    }
    let bytes = std::fs::read(&path)?;
    let container = V3Container::parse(&bytes)?;
    let model = Model::new(&container)?;
    let base = needle_web::v3::Options {
        track_heads: model.heads().next().is_some(),
        ..model.default_options()
    };
    let sized = tiled_chunk(&bytes, &model, &base)?;
    let mut reports = Vec::new();
    for (kernels, chunk) in [
        (GpuKernels::Plain, base.prefill_chunk),
        (GpuKernels::Tiled, TILED_CHUNK),
        (GpuKernels::Tiled, sized),
    ] {
        let options = needle_web::v3::Options { prefill_chunk: chunk, ..base };
        let r = cost::model(&bytes, &model, &options, kernels, prompt)?;
        println!(
            "{kernels:?}: chunk {chunk}, codes buffer {} B, device_bytes {} B ({:.2}x the {} B container), KV {:?}",
            r.codes_bytes,
            r.device_bytes,
            r.device_bytes as f64 / bytes.len() as f64,
            bytes.len(),
            options.kv
        );
        reports.push(r);
    }
    println!("\nModeled, not measured ({path}):\n");
    print!("{}", cost::table(&reports));
    Ok(())
}
