//! Tests of [`crate::kernels::cq`]: the in-place kernels against an independent, naive dense
//! reconstruction (bit-by-bit unpack, codebook * norm, explicit Hadamard matrix), against
//! upstream's own packer/unpacker output, and batched against stepped.
use crate::kernels::cq::{CqMatrix, CqWidth, MAX_GROUP, TILE};
use crate::kernels::test_util::{explicit_hadamard, pseudo_random, pseudo_random_bytes};
use crate::Error;

const WIDTHS: [CqWidth; 5] = [CqWidth::B1, CqWidth::B2, CqWidth::B3, CqWidth::B4, CqWidth::Ternary];

/// A synthetic CQ matrix: `levels` is the logical codebook (sorted, already over sqrt(G)),
/// `index` the logical level index of every (row, padded column).
struct Case {
    rows: usize,
    cols: usize,
    group: usize,
    width: CqWidth,
    packed: Vec<u8>,
    norms: Vec<u8>,
    header_levels: Vec<f32>,
    levels: Vec<f32>,
    index: Vec<usize>,
}

impl Case {
    fn new(rows: usize, cols: usize, group: usize, width: CqWidth, seed: u32) -> Self {
        let cp = cols.div_ceil(group) * group;
        let root_g = (group as f64).sqrt();
        let (levels, header_levels): (Vec<f32>, Vec<f32>) = match width {
            CqWidth::B1 => {
                let c = ((2.0 / std::f64::consts::PI).sqrt() / root_g) as f32;
                (vec![-c, c], vec![])
            }
            CqWidth::Ternary => {
                let c = (1.224_006_4 / root_g) as f32;
                (vec![-c, 0.0, c], vec![])
            }
            _ => {
                let n = 1usize << width.code_bits();
                let mut l: Vec<f32> =
                    pseudo_random(n, seed ^ 0x55).iter().map(|v| v / root_g as f32).collect();
                l.sort_by(f32::total_cmp);
                (l.clone(), l)
            }
        };
        let raw = pseudo_random_bytes(rows * cp, seed);
        let index: Vec<usize> = raw.iter().map(|&b| usize::from(b) % levels.len()).collect();
        // Stored code per logical index: ternary trits 0, 1, 2 are crumbs 3, 0, 1.
        let stored = |i: usize| if width == CqWidth::Ternary { [3u8, 0, 1][i] } else { i as u8 };
        let bits = width.code_bits();
        let row_bytes = cp * bits / 8;
        let mut packed = vec![0u8; rows * row_bytes];
        for r in 0..rows {
            for k in 0..cp {
                let code = stored(index[r * cp + k]);
                for j in 0..bits {
                    if code >> j & 1 == 1 {
                        let bit = k * bits + j;
                        packed[r * row_bytes + bit / 8] |= 1 << (bit % 8);
                    }
                }
            }
        }
        // Positive FP16 norms between 2^-3 and 2^2.
        let norms = pseudo_random_bytes(rows * cp / group * 2, seed ^ 0xabc)
            .chunks_exact(2)
            .flat_map(|p| (0x3000u16 + (u16::from_le_bytes([p[0], p[1]]) % 0x1400)).to_le_bytes())
            .collect();
        Case { rows, cols, group, width, packed, norms, header_levels, levels, index }
    }

    fn matrix(&self) -> CqMatrix<'_> {
        CqMatrix::from_parts(
            self.rows,
            self.cols,
            self.group,
            self.width,
            &self.packed,
            &self.norms,
            &self.header_levels,
        )
        .expect("valid case")
    }

    /// Upstream's reconstruction, naively: per group `(level * norm) @ H` with the explicit
    /// f32 Hadamard, summed in f64, first `cols` columns.
    fn dense(&self) -> Vec<f64> {
        let (g, cp) = (self.group, self.cols.div_ceil(self.group) * self.group);
        let h = explicit_hadamard(g);
        let mut w = vec![0.0f64; self.rows * self.cols];
        for r in 0..self.rows {
            for gi in 0..cp / g {
                let ni = r * (cp / g) + gi;
                let norm = crate::kernels::f16::to_f32(u16::from_le_bytes([
                    self.norms[2 * ni],
                    self.norms[2 * ni + 1],
                ]));
                let u: Vec<f32> =
                    (0..g).map(|k| self.levels[self.index[r * cp + gi * g + k]] * norm).collect();
                for j in 0..g {
                    let col = gi * g + j;
                    if col < self.cols {
                        w[r * self.cols + col] =
                            (0..g).map(|k| f64::from(u[k]) * f64::from(h[k * g + j])).sum();
                    }
                }
            }
        }
        w
    }
}

/// Shapes covering exact multiples of the group, padding, and several groups per row.
fn shapes(group: usize) -> [(usize, usize); 4] {
    [(1, group), (3, group + 5), (5, 3 * group - 1), (2, 17)]
}

fn assert_matvec_close(w: &[f64], rows: usize, cols: usize, x: &[f32], got: &[f32], what: &str) {
    for r in 0..rows {
        let row = &w[r * cols..][..cols];
        let want: f64 = row.iter().zip(x).map(|(a, b)| a * f64::from(*b)).sum();
        let scale: f64 = row.iter().zip(x).map(|(a, b)| (a * f64::from(*b)).abs()).sum();
        let err = (f64::from(got[r]) - want).abs();
        assert!(
            err <= 2e-6 * scale + 1e-9,
            "{what} row {r}: got {} want {want} (scale {scale})",
            got[r]
        );
    }
}

#[test]
fn matvec_matches_a_naive_dense_reconstruction_for_every_width_group_and_shape() {
    for width in WIDTHS {
        for group in [32, 64, 128] {
            for (rows, cols) in shapes(group) {
                let case = Case::new(rows, cols, group, width, (rows * 131 + cols + group) as u32);
                let m = case.matrix();
                let x = pseudo_random(cols, cols as u32);
                let mut scratch = vec![f32::NAN; m.cols_padded()];
                let mut out = vec![f32::NAN; rows];
                m.matvec(&x, &mut scratch, &mut out);
                assert_matvec_close(
                    &case.dense(),
                    rows,
                    cols,
                    &x,
                    &out,
                    &format!("{width:?} G{group} {rows}x{cols}"),
                );
            }
        }
    }
}

#[test]
fn dequant_row_matches_the_naive_dense_reconstruction() {
    for width in WIDTHS {
        for group in [16, 32, 64, 128] {
            for (rows, cols) in shapes(group) {
                let case = Case::new(rows, cols, group, width, (rows + cols * 7 + group) as u32);
                let (m, dense) = (case.matrix(), case.dense());
                let mut out = vec![f32::NAN; cols + 3];
                for r in 0..rows {
                    m.dequant_row(r, &mut out);
                    for (c, (&got, &want)) in
                        out[..cols].iter().zip(&dense[r * cols..][..cols]).enumerate()
                    {
                        assert!(
                            (f64::from(got) - want).abs() <= 1e-6 * (1.0 + want.abs()),
                            "{width:?} G{group} r{r} c{c}"
                        );
                    }
                    assert!(out[cols..].iter().all(|v| v.is_nan()), "dequant_row wrote past cols");
                }
            }
        }
    }
}

#[test]
fn rotate_input_zero_pads_and_applies_the_hadamard_per_group() {
    let case = Case::new(1, 40, 32, CqWidth::B4, 1);
    let m = case.matrix();
    let x = pseudo_random(40, 2);
    let mut xr = vec![f32::NAN; 64];
    m.rotate_input(&x, &mut xr);
    let h = explicit_hadamard(32);
    for gi in 0..2 {
        for i in 0..32 {
            let want: f64 = (0..32)
                .map(|j| {
                    f64::from(h[i * 32 + j]) * f64::from(x.get(gi * 32 + j).copied().unwrap_or(0.0))
                })
                .sum();
            assert!((f64::from(xr[gi * 32 + i]) - want).abs() < 1e-6);
        }
    }
}

#[test]
fn matmul_rotated_is_bit_identical_to_one_matvec_per_input() {
    for width in WIDTHS {
        let case = Case::new(7, 100, 32, width, 99);
        let m = case.matrix();
        let cp = m.cols_padded();
        for n in [1usize, 3, TILE, TILE + 1, 2 * TILE + 5] {
            let x = pseudo_random(n * cp, n as u32);
            let mut batched = vec![f32::NAN; n * m.rows()];
            m.matmul_rotated(&x, n, &mut batched);
            for j in 0..n {
                let mut single = vec![f32::NAN; m.rows()];
                m.matvec_rotated(&x[j * cp..][..cp], &mut single);
                let b = &batched[j * m.rows()..][..m.rows()];
                assert_eq!(
                    single.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    b.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{width:?} n={n} j={j}"
                );
            }
        }
    }
}

#[test]
fn matrices_packed_and_dequantised_by_upstream_match_the_kernels() {
    use crate::kernels::testdata::cq_upstream::CASES;
    for c in CASES {
        let width = CqWidth::from_record_bits(c.bits).expect("width");
        let cp = c.cols.div_ceil(c.group) * c.group;
        let packed_len = c.rows * cp * width.code_bits() / 8;
        let (packed, norms) = c.blob.split_at(packed_len);
        let m = CqMatrix::from_parts(c.rows, c.cols, c.group, width, packed, norms, c.levels)
            .expect(c.name);
        let dense: Vec<f64> = c.dense.iter().map(|&v| f64::from(v)).collect();
        let mut row = vec![0.0f32; c.cols];
        for r in 0..c.rows {
            m.dequant_row(r, &mut row);
            for (k, (&got, &want)) in row.iter().zip(&c.dense[r * c.cols..][..c.cols]).enumerate() {
                assert!(
                    (got - want).abs() <= 2e-6 * (1.0 + want.abs()),
                    "{} r{r} c{k}: {got} vs {want}",
                    c.name
                );
            }
        }
        let x = pseudo_random(c.cols, 5);
        let mut scratch = vec![0.0f32; cp];
        let mut out = vec![0.0f32; c.rows];
        m.matvec(&x, &mut scratch, &mut out);
        assert_matvec_close(&dense, c.rows, c.cols, &x, &out, c.name);
    }
}

#[test]
fn record_bits_map_to_widths_and_back() {
    for (bits, width) in [
        (1, CqWidth::B1),
        (2, CqWidth::B2),
        (3, CqWidth::B3),
        (4, CqWidth::B4),
        (5, CqWidth::Ternary),
    ] {
        assert_eq!(CqWidth::from_record_bits(bits), Some(width));
        assert_eq!(width.record_bits(), bits);
    }
    assert_eq!(CqWidth::from_record_bits(0), None);
    assert_eq!(CqWidth::from_record_bits(6), None);
    assert_eq!(CqWidth::Ternary.code_bits(), 2);
}

fn refusal_reason(r: crate::Result<CqMatrix<'_>>) -> &'static str {
    match r {
        Err(Error::InvalidArgument { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn from_parts_refuses_inconsistent_parts_with_a_reason() {
    let case = Case::new(2, 40, 32, CqWidth::B4, 3);
    let (p, n, l) = (&case.packed[..], &case.norms[..], &case.header_levels[..]);
    let build =
        |rows, cols, group, width, p, n, l| CqMatrix::from_parts(rows, cols, group, width, p, n, l);
    assert!(build(2, 40, 32, CqWidth::B4, p, n, l).is_ok());
    assert!(refusal_reason(build(2, 40, 32, CqWidth::B4, &p[1..], n, l)).contains("packed"));
    assert!(refusal_reason(build(2, 40, 32, CqWidth::B4, p, &n[2..], l)).contains("norm"));
    assert!(refusal_reason(build(3, 40, 32, CqWidth::B4, p, n, l)).contains("packed"));
    assert!(refusal_reason(build(2, 40, 48, CqWidth::B4, p, n, l)).contains("power of two"));
    assert!(refusal_reason(build(2, 40, 8, CqWidth::B4, p, n, l)).contains("power of two"));
    assert!(
        refusal_reason(build(2, 40, 2 * MAX_GROUP, CqWidth::B4, p, n, l)).contains("power of two")
    );
    assert!(refusal_reason(build(2, 40, 32, CqWidth::B4, p, n, &l[..8])).contains("codebook"));
    assert!(refusal_reason(build(2, 0, 32, CqWidth::B4, p, n, l)).contains("column"));
    assert!(refusal_reason(build(0, 40, 32, CqWidth::B4, &[], &[], l)).contains("row"));
    assert!(refusal_reason(build(usize::MAX, 40, 32, CqWidth::B4, p, n, l)).contains("too large"));
}

#[test]
fn ternary_crumb_code_two_is_refused() {
    let case = Case::new(2, 32, 32, CqWidth::Ternary, 4);
    let mut packed = case.packed.clone();
    packed[5] = (packed[5] & !0b1100) | 0b1000; // crumb 1 of byte 5 := 2
    let r = CqMatrix::from_parts(2, 32, 32, CqWidth::Ternary, &packed, &case.norms, &[]);
    assert!(refusal_reason(r).contains("crumb"));
}

/// `kernel` (a twin taking `n` rotated inputs) against the scalar kernel, bit for bit, for every
/// width, each group in `groups` and each batch size in `batches`.
#[cfg(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(feature = "std", target_arch = "x86_64")
))]
fn assert_bit_identical_to_scalar(
    name: &str,
    groups: &[usize],
    batches: &[usize],
    kernel: impl Fn(&CqMatrix<'_>, &[f32], usize, &mut [f32]),
) {
    use crate::kernels::cq::matmul_rotated_scalar;
    // Not a multiple of any row block the twins use (2, 4, 8), so every tail runs, a padded one too.
    const ROWS: usize = 15;
    for width in WIDTHS {
        for &group in groups {
            let case = Case::new(ROWS, 3 * group - 3, group, width, group as u32 + 1);
            let m = case.matrix();
            for &n in batches {
                let x = pseudo_random(n * m.cols_padded(), 77);
                let (mut s, mut v) = (vec![0.0f32; n * ROWS], vec![f32::NAN; n * ROWS]);
                matmul_rotated_scalar(&m, &x, n, &mut s);
                kernel(&m, &x, n, &mut v);
                assert_eq!(s, v, "{name} {width:?} G{group} n={n}");
            }
        }
    }
}

/// The smallest group, one that takes several 16-code blocks, the shipped one.
#[cfg(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(feature = "std", target_arch = "x86_64")
))]
const ALL_GROUPS: [usize; 3] = [16, 32, 128];

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[test]
fn simd_twins_are_bit_identical_to_the_scalar_cq_kernel() {
    use super::simd128;
    assert_bit_identical_to_scalar(
        "simd matmul",
        &ALL_GROUPS,
        &[1, 2, 5, TILE + 3],
        |m, x, n, out| simd128::matmul_rotated(m, x, n, out),
    );
    assert_bit_identical_to_scalar("simd matvec", &ALL_GROUPS, &[1], |m, x, _, out| {
        simd128::matvec_rotated(m, x, out)
    });
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[test]
fn avx2_twin_is_bit_identical_to_the_scalar_cq_kernel() {
    use super::avx2;
    if !std::is_x86_feature_detected!("avx2") {
        eprintln!("no AVX2 on this CPU: the AVX2 twin is not exercised");
        return;
    }
    assert_bit_identical_to_scalar("avx2", &ALL_GROUPS, &[1, 2, 5, TILE + 3], |m, x, n, out| {
        assert!(avx2::matmul_rotated(m, x, n, out), "AVX2 covers every width");
    });
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[test]
fn avx512_matvec_is_bit_identical_to_the_scalar_cq_kernel() {
    use super::avx512;
    if !crate::kernels::has_avx512() {
        eprintln!("no AVX-512 F/BW/VL on this CPU: the AVX-512 variant is not exercised");
        return;
    }
    // Groups of 16 codes are the AVX2 kernel's (the variant reads 32 codes per row at a time).
    assert!(!avx512::matvec_rotated(
        &Case::new(1, 16, 16, CqWidth::B4, 1).matrix(),
        &[0.0; 16],
        &mut [0.0]
    ));
    assert_bit_identical_to_scalar("avx512", &[32, 64, 128], &[1], |m, x, _, out| {
        assert!(avx512::matvec_rotated(m, x, out), "AVX-512 covers every width from group 32");
    });
}
