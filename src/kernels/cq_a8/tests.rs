//! Tests of [`crate::kernels::cq_a8`]: the integer kernels against the f32 CQ kernels on the int8 round
//! trip of the same inputs (within the codebook-rounding bound), the rotation against an
//! explicit Hadamard, overflow edges at every group size, and the twins bit for bit.
use crate::kernels::cq::{CqMatrix, CqWidth, TILE};
use crate::kernels::cq_a8::{matmul_a8_scalar, plane_max, rotate_a8, IntLevels};
use crate::kernels::quant::{fake_quant_i8, quantize_i8};
use crate::kernels::test_util::{pseudo_random, RandomCq};

const GROUPS: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];
const WIDTHS: [CqWidth; 5] = [CqWidth::B1, CqWidth::B2, CqWidth::B3, CqWidth::B4, CqWidth::Ternary];

/// The f32 kernels on the int8 round trip of each input: what deploy numerics computed before
/// the integer kernels, and a straightforward reference for them.
fn f32_reference(m: &CqMatrix<'_>, x: &[f32], n: usize) -> Vec<f32> {
    let (cols, cp) = (m.cols(), m.cols_padded());
    let mut xr = vec![0.0f32; n * cp];
    for j in 0..n {
        let mut xq = x[j * cols..(j + 1) * cols].to_vec();
        fake_quant_i8(&mut xq);
        m.rotate_input(&xq, &mut xr[j * cp..(j + 1) * cp]);
    }
    let mut out = vec![0.0f32; n * m.rows()];
    m.matmul_rotated(&xr, n, &mut out);
    out
}

/// The integer kernels on `n` inputs: (outputs, rotated codes, scales).
fn a8_product(m: &CqMatrix<'_>, x: &[f32], n: usize) -> (Vec<f32>, Vec<i32>, Vec<f32>) {
    let (cols, cp) = (m.cols(), m.cols_padded());
    let mut y = vec![0i32; n * cp];
    let scales: Vec<f32> = (0..n)
        .map(|j| rotate_a8(m, &x[j * cols..(j + 1) * cols], &mut y[j * cp..(j + 1) * cp]))
        .collect();
    let (mut out, mut rot) = (vec![f32::NAN; n * m.rows()], vec![f32::NAN; n * cp]);
    m.matmul_a8(&y, &scales, n, &mut rot, &mut out);
    (out, y, scales)
}

/// `Σ_g norm(r, g) · Σ_k |y_gk|` of each row of input `j`: what one unit of level error costs.
fn error_weight(m: &CqMatrix<'_>, y: &[i32], j: usize, r: usize) -> f64 {
    let (g, groups) = (m.group(), m.groups_per_row());
    let norms = &m.norms()[r * groups * 2..];
    (0..groups)
        .map(|gi| {
            let yg = &y[j * m.cols_padded() + gi * g..][..g];
            f64::from(crate::kernels::f16::at(norms, gi))
                * yg.iter().map(|&v| f64::from(v).abs()).sum::<f64>()
        })
        .sum()
}

#[test]
fn the_integer_product_matches_the_f32_kernel_on_the_int8_round_trip_within_the_codebook_rounding()
{
    for width in WIDTHS {
        for group in GROUPS {
            for (rows, cols, n) in [(3, group, 1), (5, 3 * group - 7, 2), (2, 17, 3)] {
                let o = RandomCq::new(rows, cols, group, width, (rows * 31 + cols + group) as u32);
                let m = o.matrix();
                let x = pseudo_random(n * cols, cols as u32 + 5);
                let (want, (got, y, scales)) = (f32_reference(&m, &x, n), a8_product(&m, &x, n));
                let lv = IntLevels::of(&m);
                // The integer kernel itself, whichever path this build's dispatch takes.
                let mut int = vec![f32::NAN; n * rows];
                if width == CqWidth::B4 {
                    matmul_a8_scalar(&m, &lv, &y, &scales, n, &mut int);
                }
                let maxabs = m.table().iter().fold(0.0f64, |a, &v| a.max(f64::from(v).abs()));
                // Per level the codebook rounds by at most half an integer step (`unit · sqrt(G)`
                // in level units); both paths also round in f32 (~1e-6 of the terms' magnitude).
                let per_level = 0.5 * f64::from(lv.unit) * (group as f64).sqrt() + 2e-6 * maxabs;
                for j in 0..n {
                    for r in 0..rows {
                        let (a, b) = (got[j * rows + r], want[j * rows + r]);
                        let bound = f64::from(scales[j]) / (group as f64).sqrt()
                            * error_weight(&m, &y, j, r)
                            * per_level;
                        let err = (f64::from(a) - f64::from(b)).abs();
                        assert!(err <= bound + 1e-30, "{width:?} G{group} {rows}x{cols} n{n} ({j},{r}): {a} vs {b}, err {err:.3e} > {bound:.3e}");
                        if width == CqWidth::B4 {
                            let err = (f64::from(int[j * rows + r]) - f64::from(b)).abs();
                            assert!(err <= bound + 1e-30, "integer G{group} {rows}x{cols} n{n} ({j},{r}): err {err:.3e} > {bound:.3e}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn at_the_shipped_group_the_codebook_rounding_is_below_f32_precision() {
    // G = 128: planes of 11585 split at 2^13, so a level is held to 1 part in ~2^27 of the
    // largest: the integer product agrees with the f32 kernel to its own rounding.
    let o = RandomCq::new(64, 768, 128, CqWidth::B4, 3);
    let m = o.matrix();
    let x = pseudo_random(768, 4);
    let (want, (got, _, _)) = (f32_reference(&m, &x, 1), a8_product(&m, &x, 1));
    let scale = want.iter().fold(0.0f32, |a, v| a.max(v.abs()));
    for (a, b) in got.iter().zip(&want) {
        assert!((a - b).abs() <= 2e-6 * scale, "{a} vs {b}");
    }
}

#[test]
fn plane_bounds_keep_the_worst_case_group_sum_inside_i32() {
    for group in GROUPS {
        let v = i64::from(plane_max(group));
        let g = group as f64;
        assert!((v as f64) * 128.0 * g * g.sqrt() < 2f64.powi(31), "G{group}");
        assert!(
            ((v + 1) as f64) * 128.0 * g * g.sqrt() >= 2f64.powi(31) || v == i64::from(i16::MAX),
            "G{group} not the largest"
        );
    }
    assert_eq!(plane_max(128), 11585);
    assert_eq!(plane_max(1024), 511);
}

#[test]
fn levels_split_into_planes_within_the_bound_that_recombine_to_the_rounded_level() {
    for width in WIDTHS {
        for group in GROUPS {
            let o = RandomCq::new(1, group, group, width, group as u32);
            let m = o.matrix();
            let lv = IntLevels::of(&m);
            let v = plane_max(group);
            let c = 1.0 / (f64::from(lv.unit) * (group as f64).sqrt());
            for (i, &level) in m.table().iter().enumerate() {
                let (hi, lo) = (i32::from(lv.hi[i]), i32::from(lv.lo[i]));
                assert!(
                    hi.abs() <= v && lo.abs() <= v,
                    "{width:?} G{group} code {i}: planes {hi}, {lo} over {v}"
                );
                let w = (i64::from(hi) << lv.shift) + i64::from(lo);
                assert!(
                    (w as f64 - f64::from(level) * c).abs() <= 0.5 + 1e-6 * w.abs() as f64,
                    "{width:?} G{group} code {i}"
                );
            }
        }
    }
}

/// The worst case of the bound: int8 codes of magnitude 128 whose transform is (near) flat, and
/// levels at the plane maximum with the sign of each rotated value, so every product adds.
fn worst_case(group: usize, rows: usize) -> (RandomCq, Vec<i32>) {
    // q_k = ±128 by a bent sign (-1)^(popcount(k_hi & k_lo)): for G = 4^m its transform is flat.
    let half = group.trailing_zeros() / 2;
    let q: Vec<i32> = (0..group)
        .map(|k| {
            if ((k >> half) & k & ((1 << half) - 1)).count_ones().is_multiple_of(2) {
                -128
            } else {
                127
            }
        })
        .collect();
    let mut y = q.clone();
    fwht_reference(&mut y);
    let mut o = RandomCq::new(rows, group, group, CqWidth::B4, 1);
    // Codebook: code 0 the largest negative level, code 15 the largest positive one.
    o.levels = (0..16).map(|i| (i as f32 - 7.5) / 7.5).collect();
    let mut packed = vec![0u8; rows * group / 2];
    for r in 0..rows {
        for k in 0..group {
            // Row 0 matches the signs of y (every product positive); later rows mix codes.
            let code: u8 = if r == 0 {
                if y[k] >= 0 {
                    15
                } else {
                    0
                }
            } else {
                ((k * 7 + r) % 16) as u8
            };
            packed[r * group / 2 + k / 2] |= code << (4 * (k % 2));
        }
    }
    o.packed = packed;
    (o, y)
}

fn fwht_reference(y: &mut [i32]) {
    let n = y.len();
    let orig = y.to_vec();
    for (i, v) in y.iter_mut().enumerate() {
        *v = (0..n).map(|j| if (i & j).count_ones() % 2 == 0 { orig[j] } else { -orig[j] }).sum();
    }
}

/// The integer product in i64 (no overflow possible), then the kernels' f32 steps.
fn i64_reference(m: &CqMatrix<'_>, lv: &IntLevels, y: &[i32], scale: f32) -> Vec<f32> {
    let (g, groups) = (m.group(), m.groups_per_row());
    (0..m.rows())
        .map(|r| {
            let mut sum = 0.0f32;
            for gi in 0..groups {
                let mut acc = 0i64;
                for k in 0..g {
                    let col = gi * g + k;
                    let byte = m.packed()[r * m.row_bytes() + col / 2];
                    let code = usize::from(if col % 2 == 0 { byte & 15 } else { byte >> 4 });
                    acc += ((i64::from(lv.hi[code]) << lv.shift) + i64::from(lv.lo[code]))
                        * i64::from(y[col]);
                }
                sum += acc as f32 * crate::kernels::f16::at(&m.norms()[r * groups * 2..], gi);
            }
            sum * (scale * lv.unit)
        })
        .collect()
}

#[test]
fn worst_case_inputs_at_every_group_size_do_not_overflow() {
    for group in GROUPS {
        let (o, y) = worst_case(group, 3);
        let m = o.matrix();
        let lv = IntLevels::of(&m);
        let want = i64_reference(&m, &lv, &y, 0.5);
        let mut got = vec![f32::NAN; 3];
        matmul_a8_scalar(&m, &lv, &y, &[0.5], 1, &mut got);
        assert_eq!(got, want, "G{group}");
        // Row 0 comes close to the bound the planes are sized for.
        let top: i64 = (0..group)
            .map(|k| i64::from(lv.hi[if y[k] >= 0 { 15 } else { 0 }]) * i64::from(y[k]))
            .sum();
        assert!(
            top as f64 > 0.2 * f64::from(plane_max(group)) * 128.0 * (group as f64).powf(1.5),
            "G{group}: {top}"
        );
    }
}

#[test]
fn rotate_a8_is_the_unnormalised_hadamard_of_the_int8_codes() {
    for group in GROUPS {
        let cols = group + 3;
        let o = RandomCq::new(1, cols, group, CqWidth::B4, 2);
        let m = o.matrix();
        let x = pseudo_random(cols, 11);
        let mut y = vec![7i32; m.cols_padded()];
        let scale = rotate_a8(&m, &x, &mut y);
        let mut q = vec![0i32; m.cols_padded()];
        assert_eq!(scale, quantize_i8(&x, &mut q[..cols]));
        for (yg, qg) in y.chunks_exact(group).zip(q.chunks_exact_mut(group)) {
            fwht_reference(qg);
            assert_eq!(yg, qg, "G{group}");
        }
    }
}

#[test]
fn batched_inputs_give_the_bits_of_single_ones() {
    for width in WIDTHS {
        let o = RandomCq::new(6, 200, 64, width, 9);
        let m = o.matrix();
        let n = TILE + 5;
        let x = pseudo_random(n * 200, 21);
        let (all, _, _) = a8_product(&m, &x, n);
        for j in 0..n {
            let (one, _, _) = a8_product(&m, &x[j * 200..(j + 1) * 200], 1);
            assert_eq!(one, all[j * 6..(j + 1) * 6], "{width:?} j{j}");
        }
    }
}

/// `kernel` against the scalar kernel, bit for bit: 4-bit matrices at every group size, random
/// and worst-case inputs, one input and batches across tiles.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn assert_bit_identical_to_scalar(
    name: &str,
    kernel: impl Fn(&CqMatrix<'_>, &IntLevels, &[i32], &[f32], usize, &mut [f32]),
) {
    let check = |m: &CqMatrix<'_>, y: &[i32], n: usize, what: &str| {
        let lv = IntLevels::of(m);
        let scales: Vec<f32> = (0..n).map(|j| 0.01 + j as f32 * 0.003).collect();
        let (mut s, mut v) = (vec![f32::NAN; n * m.rows()], vec![f32::NAN; n * m.rows()]);
        matmul_a8_scalar(m, &lv, y, &scales, n, &mut s);
        kernel(m, &lv, y, &scales, n, &mut v);
        assert_eq!(
            s.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            "{name} {what}"
        );
    };
    for group in GROUPS {
        let o = RandomCq::new(5, 3 * group - 3, group, CqWidth::B4, group as u32 + 1);
        let m = o.matrix();
        for n in [1, 2, TILE + 3] {
            let x = pseudo_random(n * m.cols(), 77);
            let (_, y, _) = a8_product(&m, &x, n);
            check(&m, &y, n, &format!("G{group} n={n}"));
        }
    }
    for group in GROUPS {
        let (o, y) = worst_case(group, 4);
        check(&o.matrix(), &y, 1, &format!("worst case G{group}"));
        let y2: Vec<i32> = y.iter().chain(&y).copied().collect();
        check(&o.matrix(), &y2, 2, &format!("worst case G{group} n=2"));
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[test]
fn avx2_variant_is_bit_identical_to_the_scalar_a8_kernel() {
    if !std::is_x86_feature_detected!("avx2") {
        eprintln!("no AVX2 on this CPU: the AVX2 variant is not exercised");
        return;
    }
    // Which kernel ran is asserted: groups 32 to 256 must take the AVX2 path (else this would
    // compare the scalar kernel with itself), the others must decline it.
    assert_bit_identical_to_scalar("avx2", |m, lv, y, s, n, out| {
        let ran = crate::kernels::cq_a8::avx2::matmul_a8(m, lv, y, s, n, out);
        assert_eq!(
            ran,
            (32..=256).contains(&m.group()),
            "AVX2 kernel ran: {ran} at group {}",
            m.group()
        );
        if !ran {
            matmul_a8_scalar(m, lv, y, s, n, out);
        }
    });
}
