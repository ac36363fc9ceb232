//! Rotary position embedding in the half-split form (upstream's `apply_rope`): the first and
//! second halves of a head are the two coordinates of each rotated pair.
//!
//! Frequencies follow upstream's `precompute_rope_freqs` in f32: `freq_i = 1 / theta^(2i/dim)`,
//! `angle = pos * freq_i`.

/// `cos` and `sin` of every pair's angle at `pos` for heads of width `2 * cos.len()`.
pub fn angles(pos: usize, theta: f32, cos: &mut [f32], sin: &mut [f32]) {
    assert_eq!(cos.len(), sin.len(), "rope::angles: cos and sin lengths differ");
    let dim = (2 * cos.len()) as f32;
    let t = pos as f32;
    for (i, (c, s)) in cos.iter_mut().zip(sin.iter_mut()).enumerate() {
        let freq = 1.0 / libm::powf(theta, (2 * i) as f32 / dim);
        let angle = t * freq;
        *c = libm::cosf(angle);
        *s = libm::sinf(angle);
    }
}

/// Rotates one head in place: `[x1*cos - x2*sin, x2*cos + x1*sin]` with `x1, x2` its halves.
pub fn apply(x: &mut [f32], cos: &[f32], sin: &[f32]) {
    let half = cos.len();
    assert!(
        x.len() == 2 * half && sin.len() == half,
        "rope::apply: head width must be twice the angle count"
    );
    let (x1, x2) = x.split_at_mut(half);
    for i in 0..half {
        let (a, b) = (x1[i], x2[i]);
        x1[i] = a * cos[i] - b * sin[i];
        x2[i] = b * cos[i] + a * sin[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_zero_is_the_identity() {
        let (mut c, mut s) = ([0.0f32; 4], [0.0f32; 4]);
        angles(0, 10_000.0, &mut c, &mut s);
        let mut x = [1.0f32, -2.0, 3.0, 0.5, 7.0, 8.0, -9.0, 0.25];
        let before = x;
        apply(&mut x, &c, &s);
        assert_eq!(x, before);
    }

    #[test]
    fn the_first_pair_turns_by_the_position_in_radians() {
        let (mut c, mut s) = ([0.0f32; 2], [0.0f32; 2]);
        angles(3, 100_000.0, &mut c, &mut s);
        assert_eq!((c[0], s[0]), (libm::cosf(3.0), libm::sinf(3.0)));
        // freq_1 = theta^(-1/2) for a head of width 4
        assert!((s[1] - libm::sinf(3.0 / libm::sqrtf(100_000.0))).abs() < 1e-7);
    }

    #[test]
    fn rotation_keeps_each_pair_length() {
        let (mut c, mut s) = ([0.0f32; 3], [0.0f32; 3]);
        angles(17, 10_000.0, &mut c, &mut s);
        let mut x = [0.3f32, -1.2, 2.0, 0.7, 0.1, -0.4];
        let before = x;
        apply(&mut x, &c, &s);
        for i in 0..3 {
            let r0 = before[i].hypot(before[i + 3]);
            let r1 = x[i].hypot(x[i + 3]);
            assert!((r0 - r1).abs() < 1e-6);
        }
    }
}
