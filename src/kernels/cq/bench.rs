//! CQ kernel microbenchmark at the shipped Needle 3 shapes (not a test: `#[ignore]`d, prints
//! timings). Natively: `cargo test --release --lib kernels::cq::bench -- --ignored --nocapture`;
//! on wasm32 SIMD128 under Node WASI: the command in `kernels/mod.rs` with
//! `--release kernels::cq::bench -- --ignored --nocapture`. Compare builds by interleaving runs.
use crate::kernels::cq::CqWidth;
use crate::kernels::test_util::{pseudo_random, RandomCq};

pub(in crate::kernels) const GROUP: usize = 128;

/// Seconds of CPU time this process has used: on a shared machine, preemption does not count
/// against the kernel (wasm32 under WASI and Linux: the process CPU-time clock; elsewhere wall
/// time).
pub(in crate::kernels) fn cpu_seconds() -> f64 {
    #[cfg(target_os = "wasi")]
    {
        #[link(wasm_import_module = "wasi_snapshot_preview1")]
        extern "C" {
            fn clock_time_get(id: u32, precision: u64, time: *mut u64) -> u16;
        }
        let mut t = 0u64;
        // SAFETY: WASI preview1 call writing one u64; clock 2 = process CPU time.
        unsafe { clock_time_get(2, 1, &mut t) };
        t as f64 * 1e-9
    }
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(id: i32, tp: *mut Timespec) -> i32;
        }
        let mut t = Timespec { sec: 0, nsec: 0 };
        // SAFETY: libc call writing one timespec; clock 2 = CLOCK_PROCESS_CPUTIME_ID.
        unsafe { clock_gettime(2, &mut t) };
        t.sec as f64 + t.nsec as f64 * 1e-9
    }
    #[cfg(not(any(target_os = "wasi", target_os = "linux")))]
    {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64()
    }
}

/// CPU seconds [`warm_up`] runs a kernel before it is timed.
const WARM_UP_S: f64 = 0.3;

/// Runs `f` for [`WARM_UP_S`] of CPU time. Under V8 a wasm function starts as baseline
/// (Liftoff) code and runs its optimised code only from a call after its background compile
/// ends: timing the first few calls measured the baseline code, about half as fast
/// (BENCHMARKS.md). Natively this only warms the caches.
pub(in crate::kernels) fn warm_up(mut f: impl FnMut()) {
    let start = cpu_seconds();
    while cpu_seconds() - start < WARM_UP_S {
        f();
    }
}

/// Median of `reps` timings of `f`, in microseconds, after [`warm_up`].
fn median_us(reps: usize, mut f: impl FnMut()) -> f64 {
    warm_up(&mut f);
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = cpu_seconds();
            f();
            (cpu_seconds() - s) * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

#[test]
#[ignore]
fn cq_bench() {
    let shapes = [(768, 768), (2048, 768), (768, 2048), (16384, 768)];
    for width in [CqWidth::B4, CqWidth::B3, CqWidth::B2, CqWidth::Ternary] {
        for &(rows, cols) in &shapes {
            if width != CqWidth::B4 && rows == 16384 {
                continue;
            }
            let o = RandomCq::new(rows, cols, GROUP, width, rows as u32 ^ cols as u32);
            let m = o.matrix();
            let x = pseudo_random(16 * cols, 3);
            let mut out = vec![0.0f32; 16 * rows];
            let reps = if rows * cols > 4_000_000 { 11 } else { 31 };
            let t1 = median_us(reps, || m.matmul_rotated(&x[..cols], 1, &mut out[..rows]));
            let t16 = median_us(reps.min(11), || m.matmul_rotated(&x, 16, &mut out));
            println!(
                "{width:?} {rows}x{cols}: matvec {t1:8.1} us ({:.2} ns/weight)  matmul16 {:8.1} us/input",
                t1 * 1e3 / (rows * cols) as f64,
                t16 / 16.0
            );
        }
    }
}
