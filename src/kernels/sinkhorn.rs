//! Sinkhorn normalisation of a small square matrix of logits (upstream's `_sinkhorn`, used by the
//! mHC residual mixing): alternately subtract each row's and each column's log-sum-exp, then
//! exponentiate, giving an (approximately) doubly stochastic matrix.

/// Upstream's fixed iteration count.
pub const ITERATIONS: usize = 20;

/// `log Σ exp(x)` over the elements `x[first + k*stride]`, `k < n`, stabilised by the maximum
/// (as `jax.nn.logsumexp`: a non-finite maximum is replaced by 0).
fn log_sum_exp(x: &[f32], first: usize, stride: usize, n: usize) -> f32 {
    let mut max = f32::NEG_INFINITY;
    for k in 0..n {
        max = max.max(x[first + k * stride]);
    }
    let shift = if max.is_finite() { max } else { 0.0 };
    let mut sum = 0.0f32;
    for k in 0..n {
        sum += libm::expf(x[first + k * stride] - shift);
    }
    libm::logf(sum) + shift
}

/// About the multiply-adds one [`sinkhorn`] of an `n x n` matrix costs, an exponential or a
/// logarithm counted as 16 (for deciding whether to split work across threads).
pub fn work(n: usize) -> usize {
    16 * (ITERATIONS * 2 * n * (n + 1) + n * n)
}

/// Replaces the row-major `n x n` logits `m` by their Sinkhorn-normalised exponentials.
pub fn sinkhorn(m: &mut [f32], n: usize) {
    assert_eq!(m.len(), n * n, "sinkhorn: matrix must be n x n");
    for _ in 0..ITERATIONS {
        for i in 0..n {
            let lse = log_sum_exp(m, i * n, 1, n);
            for v in &mut m[i * n..(i + 1) * n] {
                *v -= lse;
            }
        }
        for j in 0..n {
            let lse = log_sum_exp(m, j, n, n);
            for i in 0..n {
                m[i * n + j] -= lse;
            }
        }
    }
    for v in m.iter_mut() {
        *v = libm::expf(*v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_sum_to_one_and_rows_nearly_so() {
        let mut m = [0.3f32, -1.0, 2.0, 0.5, 4.0, -0.2, 1.1, 0.0, -3.0];
        sinkhorn(&mut m, 3);
        for j in 0..3 {
            let col: f32 = (0..3).map(|i| m[i * 3 + j]).sum();
            assert!((col - 1.0).abs() < 1e-5, "column {j} sums to {col}");
        }
        for i in 0..3 {
            let row: f32 = m[i * 3..i * 3 + 3].iter().sum();
            assert!((row - 1.0).abs() < 1e-3, "row {i} sums to {row}");
        }
    }

    #[test]
    fn uniform_logits_give_the_uniform_matrix() {
        let mut m = [5.0f32; 16];
        sinkhorn(&mut m, 4);
        for v in m {
            assert!((v - 0.25).abs() < 1e-7);
        }
    }

    #[test]
    fn a_one_by_one_matrix_becomes_one() {
        let mut m = [-7.5f32];
        sinkhorn(&mut m, 1);
        assert_eq!(m, [1.0]);
    }
}
