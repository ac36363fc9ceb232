//! A8 integer CQ kernel against the f32 kernel on the int8 round trip, at the shipped Needle 3
//! shapes (not a test: `#[ignore]`d, prints timings, interleaved A/B). Natively:
//! `cargo test --release --lib kernels::cq_a8::bench -- --ignored --nocapture`; on wasm32 SIMD128
//! under Node WASI: the command in `kernels/mod.rs` with `--release kernels::cq_a8::bench --
//! --ignored --nocapture`.
use crate::kernels::cq::bench::{cpu_seconds, warm_up, GROUP};
use crate::kernels::cq::{CqMatrix, CqWidth};
use crate::kernels::cq_a8::rotate_a8;
use crate::kernels::quant::fake_quant_i8;
use crate::kernels::test_util::{pseudo_random, RandomCq};

#[test]
#[ignore]
fn cq_a8_bench() {
    let shapes = [
        (CqWidth::B4, 768, 768),
        (CqWidth::B4, 1568, 768),
        (CqWidth::B4, 24, 3072),
        (CqWidth::B4, 16384, 768),
    ];
    let others = [CqWidth::B3, CqWidth::B2, CqWidth::Ternary].map(|w| (w, 768, 768));
    for &(width, rows, cols) in shapes.iter().chain(&others) {
        let o = RandomCq::new(rows, cols, GROUP, width, rows as u32 ^ cols as u32);
        let m: CqMatrix<'_> = o.matrix();
        for n in [1usize, 16] {
            let x = pseudo_random(n * cols, 3);
            let (mut out_f, mut out_a) = (vec![0.0f32; n * rows], vec![0.0f32; n * rows]);
            let (mut xr, mut y, mut scales, mut rot) = (
                vec![0.0f32; n * cols],
                vec![0i32; n * cols],
                vec![0.0f32; n],
                vec![0.0f32; n * cols],
            );
            let mut f32_path = || {
                for j in 0..n {
                    let mut xq = x[j * cols..(j + 1) * cols].to_vec();
                    fake_quant_i8(&mut xq);
                    m.rotate_input(&xq, &mut xr[j * cols..(j + 1) * cols]);
                }
                m.matmul_rotated(&xr, n, &mut out_f);
            };
            let mut a8_path = || {
                for j in 0..n {
                    scales[j] = rotate_a8(
                        &m,
                        &x[j * cols..(j + 1) * cols],
                        &mut y[j * cols..(j + 1) * cols],
                    );
                }
                m.matmul_a8(&y, &scales, n, &mut rot, &mut out_a);
            };
            warm_up(&mut f32_path);
            warm_up(&mut a8_path);
            let reps = if rows * cols * n > 4_000_000 { 5 } else { 31 };
            let (mut tf, mut ta) = (Vec::new(), Vec::new());
            // Alternate which path runs first: the second finds the codes in cache.
            for rep in 0..reps {
                let t0 = cpu_seconds();
                if rep % 2 == 0 {
                    f32_path()
                } else {
                    a8_path()
                }
                let t1 = cpu_seconds();
                if rep % 2 == 0 {
                    a8_path()
                } else {
                    f32_path()
                }
                let (first, second) = (t1 - t0, cpu_seconds() - t1);
                let (f, a) = if rep % 2 == 0 { (first, second) } else { (second, first) };
                tf.push(f);
                ta.push(a);
            }
            tf.sort_by(f64::total_cmp);
            ta.sort_by(f64::total_cmp);
            let (f, a) = (tf[reps / 2] * 1e6 / n as f64, ta[reps / 2] * 1e6 / n as f64);
            println!("{width:?} {rows}x{cols} n={n}: f32 {f:8.1} us/input  a8 {a:8.1} us/input  a8/f32 {:.2}", a / f);
        }
    }
}
