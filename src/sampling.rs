//! Choosing the next token from a row of logits.
//!
//! Greedy (temperature 0, upstream's default, or any temperature below [`MIN_TEMPERATURE`])
//! takes the first maximum, like `jnp.argmax`; a NaN
//! counts as the maximum there too, so the first NaN wins. Upstream samples with
//! `jax.random.categorical`, whose threefry stream and float rounding cannot be reproduced
//! bit-for-bit outside XLA, so sampled text matches upstream only in distribution. Sampling
//! here is nevertheless fully deterministic for a given seed, on every target:
//!
//! - PRNG: xoshiro256** (Blackman & Vigna), its 256-bit state filled from the 64-bit seed by
//!   four SplitMix64 outputs, as its authors recommend. Each sampled token consumes exactly one
//!   64-bit output, turned into a uniform `u` in [0, 1) from its top 53 bits. Greedy steps
//!   consume nothing.
//! - Candidates: logits divided by the temperature (f32); NaN logits are never sampled.
//!   Ordered by scaled logit descending, index ascending; `top_k > 0` keeps the first `top_k`.
//!   Weights are `exp(l - max)` in f64 (libm, so native and wasm agree); `top_p < 1` keeps the
//!   shortest prefix whose weight reaches `top_p` of the total. The token is the first whose
//!   running weight exceeds `u` times the kept total.
use alloc::vec::Vec;

use crate::{Error, Result};

/// Temperatures below this sample greedily. Dividing logits by a temperature near f32's
/// smallest normal overflows them to infinity (at ~1e-38 every positive logit became `inf`, and
/// the sample was uniform over them); at 1e-6 a logit gap of 1e-4 already weighs the runner-up
/// by e^-100, so below it sampling is greedy in all but exact ties, and greedy it is.
pub const MIN_TEMPERATURE: f32 = 1e-6;

#[derive(Clone)]
pub struct Sampler {
    /// Below [`MIN_TEMPERATURE`] (0 included) means greedy.
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens; 0 means no limit.
    pub top_k: usize,
    /// Nucleus mass in (0, 1]; 1 means no limit.
    pub top_p: f32,
    pub seed: u64,
    rng: Xoshiro256,
    candidates: Vec<(f32, u32)>,
}

impl Sampler {
    pub fn new(temperature: f32, top_k: usize, top_p: f32, seed: u64) -> Result<Sampler> {
        if !(temperature >= 0.0 && temperature.is_finite()) {
            return Err(Error::InvalidArgument {
                name: "temperature",
                reason: "must be finite and >= 0",
            });
        }
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(Error::InvalidArgument { name: "top_p", reason: "must be in (0, 1]" });
        }
        Ok(Sampler {
            temperature,
            top_k,
            top_p,
            seed,
            rng: Xoshiro256::new(seed),
            candidates: Vec::new(),
        })
    }

    pub fn greedy() -> Sampler {
        Sampler {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            seed: 0,
            rng: Xoshiro256::new(0),
            candidates: Vec::new(),
        }
    }

    /// Restarts the random stream from `seed`, so a generation can be replayed.
    pub fn reset(&mut self) {
        self.rng = Xoshiro256::new(self.seed);
    }

    /// The next token. An empty row yields 0.
    pub fn sample(&mut self, logits: &[f32]) -> u32 {
        if self.temperature < MIN_TEMPERATURE {
            return argmax(logits);
        }
        let inv_t = 1.0 / self.temperature;
        self.candidates.clear();
        self.candidates.extend(
            logits
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.is_nan())
                .map(|(i, &l)| (l * inv_t, i as u32)),
        );
        if self.candidates.is_empty() {
            return argmax(logits);
        }
        // Candidates are in index order, so a stable sort by rank leaves ties in index order.
        crate::sort::sort_by_key(&mut self.candidates, |c| rank_key(c.0));
        if self.top_k > 0 {
            self.candidates.truncate(self.top_k);
        }

        let max = self.candidates[0].0;
        let weight = |l: f32| -> f64 {
            if max == f32::INFINITY {
                // Only the infinite logits carry mass, equally.
                if l == f32::INFINITY {
                    1.0
                } else {
                    0.0
                }
            } else if max == f32::NEG_INFINITY {
                1.0
            } else {
                libm::exp((l - max) as f64)
            }
        };
        let total: f64 = self.candidates.iter().map(|c| weight(c.0)).sum();
        let mut kept = self.candidates.len();
        let mut kept_total = total;
        if self.top_p < 1.0 {
            let target = self.top_p as f64 * total;
            let mut running = 0.0;
            for (i, c) in self.candidates.iter().enumerate() {
                running += weight(c.0);
                if running >= target {
                    kept = i + 1;
                    kept_total = running;
                    break;
                }
            }
        }
        let threshold = self.rng.next_unit() * kept_total;
        let mut running = 0.0;
        for c in &self.candidates[..kept] {
            running += weight(c.0);
            if running > threshold {
                return c.1;
            }
        }
        self.candidates[kept - 1].1
    }
}

/// A scaled logit's rank as an integer, smaller first: descending logit, with -0.0 and 0.0 equal
/// (as `partial_cmp` has them). Floats order like their bits read as integers once negatives
/// have all bits flipped and positives the sign bit; NaNs never get here.
fn rank_key(l: f32) -> u32 {
    let bits = if l == 0.0 { 0 } else { l.to_bits() };
    let ascending = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
    !ascending
}

/// Index of the first maximum; the first NaN if there is one (`jnp.argmax`); 0 when empty.
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &l) in logits.iter().enumerate() {
        if l.is_nan() {
            return i as u32;
        }
        if l > logits[best] {
            best = i;
        }
    }
    best as u32
}

#[derive(Clone)]
struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Xoshiro256 { s: [next(), next(), next(), next()] }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_keys_order_candidates_by_descending_logit_then_index() {
        let logits = [
            0.5,
            -0.0,
            0.0,
            f32::INFINITY,
            -1e-40,
            1e-40,
            f32::NEG_INFINITY,
            0.5,
            -3.25,
            f32::MAX,
            -f32::MAX,
            0.0,
            7.0,
            -0.0,
            1e-45,
        ];
        let mut by_key: Vec<(f32, u32)> = logits.iter().copied().zip(0..).collect();
        let mut by_rank = by_key.clone();
        crate::sort::sort_by_key(&mut by_key, |c| rank_key(c.0));
        by_rank.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(a.1.cmp(&b.1)));
        let ids = |v: &[(f32, u32)]| v.iter().map(|c| c.1).collect::<Vec<_>>();
        assert_eq!(ids(&by_key), ids(&by_rank));
    }

    fn draws(sampler: &mut Sampler, logits: &[f32], n: usize) -> Vec<u32> {
        (0..n).map(|_| sampler.sample(logits)).collect()
    }

    #[test]
    fn xoshiro_matches_the_published_test_vector() {
        // State [1, 2, 3, 4]: the vector the reference implementation's ports test against.
        let mut rng = Xoshiro256 { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            [11520, 0, 1509978240, 1215971899390074240, 1216172134540287360, 607988272756665600]
        );
    }

    #[test]
    fn splitmix_seeding_fills_the_state_from_the_seed() {
        // SplitMix64's first output for seed 0.
        assert_eq!(Xoshiro256::new(0).s[0], 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn greedy_takes_the_first_maximum() {
        assert_eq!(argmax(&[1.0, 3.0, 2.0, 3.0]), 1);
        assert_eq!(Sampler::greedy().sample(&[0.5, -1.0, 0.5]), 0);
    }

    #[test]
    fn temperatures_too_small_to_divide_by_are_greedy_not_uniform() {
        // Token 3 is the clear maximum; at 1e-38, 1/T overflowed and every positive logit
        // became infinite and equally likely.
        let logits = [1.0f32, 2.0, 0.5, 9.0, 3.0, 0.0, 4.0];
        for t in [f32::MIN_POSITIVE, 1e-38, 1e-30, 1e-7] {
            let mut s = Sampler::new(t, 0, 1.0, 7).unwrap();
            assert!(draws(&mut s, &logits, 200).iter().all(|&id| id == 3), "temperature {t:e}");
        }
        let mut warm = Sampler::new(5.0, 0, 1.0, 7).unwrap();
        assert!(draws(&mut warm, &logits, 200).iter().any(|&id| id != 3));
    }

    #[test]
    fn greedy_treats_nan_as_the_maximum_like_jax() {
        assert_eq!(argmax(&[1.0, f32::NAN, 9.0, f32::NAN]), 1);
    }

    #[test]
    fn an_empty_row_yields_token_zero() {
        assert_eq!(argmax(&[]), 0);
        assert_eq!(Sampler::new(1.0, 0, 1.0, 1).unwrap().sample(&[]), 0);
    }

    #[test]
    fn the_same_seed_replays_the_same_tokens() {
        let logits: Vec<f32> = (0..50).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let mut a = Sampler::new(0.8, 0, 1.0, 42).unwrap();
        let mut b = Sampler::new(0.8, 0, 1.0, 42).unwrap();
        let first = draws(&mut a, &logits, 200);
        assert_eq!(first, draws(&mut b, &logits, 200));
        a.reset();
        assert_eq!(first, draws(&mut a, &logits, 200));
        let mut c = Sampler::new(0.8, 0, 1.0, 43).unwrap();
        assert_ne!(first, draws(&mut c, &logits, 200));
    }

    #[test]
    fn top_k_restricts_the_support_to_the_k_best() {
        let logits = [0.0, 5.0, 1.0, 4.9, 4.8, -2.0];
        let mut s = Sampler::new(10.0, 3, 1.0, 7).unwrap();
        let seen = draws(&mut s, &logits, 2000);
        assert!(seen.iter().all(|t| [1, 3, 4].contains(t)));
        for t in [1, 3, 4] {
            assert!(seen.contains(&t), "token {t} never drawn");
        }
    }

    #[test]
    fn top_k_ties_keep_the_lower_index() {
        let mut s = Sampler::new(1.0, 2, 1.0, 3).unwrap();
        let seen = draws(&mut s, &[1.0, 2.0, 2.0, 2.0], 500);
        assert!(seen.iter().all(|&t| t == 1 || t == 2));
    }

    #[test]
    fn top_p_keeps_the_smallest_prefix_reaching_the_mass() {
        // Probabilities ~ [0.643, 0.237, 0.087, 0.032]: 0.85 needs the first two.
        let logits = [3.0, 2.0, 1.0, 0.0];
        let mut s = Sampler::new(1.0, 0, 0.85, 11).unwrap();
        let seen = draws(&mut s, &logits, 2000);
        assert!(seen.iter().all(|&t| t == 0 || t == 1));
        assert!(seen.contains(&1));
        let mut tiny = Sampler::new(1.0, 0, 0.01, 11).unwrap();
        assert!(draws(&mut tiny, &logits, 100).iter().all(|&t| t == 0));
    }

    #[test]
    fn sampling_follows_the_softmax_distribution() {
        let logits = [0.0f32, libm::logf(3.0)]; // probabilities 1/4, 3/4
        let mut s = Sampler::new(1.0, 0, 1.0, 5).unwrap();
        let ones = draws(&mut s, &logits, 20_000).iter().filter(|&&t| t == 1).count();
        assert!((14_500..15_500).contains(&ones), "{ones}");
    }

    #[test]
    fn nan_logits_are_never_sampled_and_infinities_take_all_mass() {
        let mut s = Sampler::new(1.0, 0, 1.0, 9).unwrap();
        assert!(draws(&mut s, &[f32::NAN, 0.0, f32::NAN, 1.0], 300)
            .iter()
            .all(|&t| t == 1 || t == 3));
        let inf = draws(&mut s, &[0.0, f32::INFINITY, 5.0, f32::INFINITY], 300);
        assert!(inf.iter().all(|&t| t == 1 || t == 3) && inf.contains(&1) && inf.contains(&3));
        assert_eq!(s.sample(&[f32::NAN; 3]), 0);
    }

    #[test]
    fn out_of_range_options_are_refused() {
        assert!(Sampler::new(-0.1, 0, 1.0, 0).is_err());
        assert!(Sampler::new(f32::NAN, 0, 1.0, 0).is_err());
        assert!(Sampler::new(f32::INFINITY, 0, 1.0, 0).is_err());
        assert!(Sampler::new(1.0, 0, 0.0, 0).is_err());
        assert!(Sampler::new(1.0, 0, 1.5, 0).is_err());
    }
}
