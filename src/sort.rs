//! One sort for the whole crate. The standard library's sorts are generic over the element and
//! the comparison, so each call site compiled its own copy: 2-11 KB of wasm each, 44 KB for
//! the seven in the SIMD module. This one orders positions through a comparison passed by
//! reference and moves the elements through a swap passed the same way, so its body is compiled
//! once; a call site adds two small closures.
//!
//! [`sort_by`] is a stable merge sort, O(n log n) for any input; [`sort_by_key`], for a `u32`
//! key, a stable radix sort in linear time. Equal elements keep their order, so they give what
//! `sort_by` gave, and what `sort_unstable_by` gave wherever equal elements are
//! indistinguishable (every call site here: plain integers, whole tuples, or a ranking that ends
//! in the index).
use alloc::vec::Vec;
use core::cmp::Ordering;

/// Sorts `v` by `compare`, stably.
pub fn sort_by<T>(v: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let order = sorted_positions(v.len(), &mut |a, b| compare(&v[a], &v[b]) == Ordering::Greater);
    permute(order, &mut |a, b| v.swap(a, b));
}

/// Sorts `v` in ascending order, stably.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts `v` by a `u32` key, stably, in linear time: for the one sort on a per-token path,
/// sampling's ranking of the whole vocabulary, where [`sort_by`]'s comparison through a
/// reference made a sampled token ~20% slower in wasm than the standard sort.
pub fn sort_by_key<T>(v: &mut [T], key: impl Fn(&T) -> u32) {
    let keys: Vec<u32> = v.iter().map(key).collect();
    permute(radix_positions(&keys), &mut |a, b| v.swap(a, b));
}

/// The positions `0..n` in sorted order: bottom-up merges of runs doubling in width, taking
/// from the right run only when the left run's head sorts after it (`after(left, right)`), so
/// ties keep their order.
fn sorted_positions(n: usize, after: &mut dyn FnMut(usize, usize) -> bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut merged = order.clone();
    let mut width = 1;
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut left, mut right) = (start, mid);
            for slot in &mut merged[start..end] {
                if right < end && (left == mid || after(order[left], order[right])) {
                    *slot = order[right];
                    right += 1;
                } else {
                    *slot = order[left];
                    left += 1;
                }
            }
        }
        core::mem::swap(&mut order, &mut merged);
        width *= 2;
    }
    order
}

/// The positions `0..keys.len()` in ascending order of their keys, ties in position order: a
/// counting sort of the positions per key byte, least significant first.
fn radix_positions(keys: &[u32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut next = alloc::vec![0; keys.len()];
    for shift in [0, 8, 16, 24] {
        let digit = |i: usize| (keys[i] >> shift & 0xff) as usize;
        let mut start = [0usize; 257];
        for &i in &order {
            start[digit(i) + 1] += 1;
        }
        for d in 0..256 {
            start[d + 1] += start[d];
        }
        for &i in &order {
            next[start[digit(i)]] = i;
            start[digit(i)] += 1;
        }
        core::mem::swap(&mut order, &mut next);
    }
    order
}

/// Rearranges so that position `i` holds the element that was at `order[i]`, one cycle of the
/// permutation at a time; a placed position is marked by pointing at itself.
fn permute(mut order: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start {
                break;
            }
            swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random values with many repeats (xorshift).
    fn values(n: usize, seed: u64, range: u64) -> Vec<u64> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s % range
            })
            .collect()
    }

    #[test]
    fn sorts_like_the_standard_stable_sort() {
        for n in [0, 1, 2, 3, 5, 8, 17, 64, 100, 1000, 4099] {
            for range in [1, 3, 50, u64::MAX] {
                let v = values(n, (n as u64 * 31) ^ range, range);
                // Pairs (value, original position): stability shows in the second field.
                let mut ours: Vec<(u64, usize)> = v.iter().copied().zip(0..).collect();
                let mut std = ours.clone();
                sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
                std.sort_by_key(|a| a.0);
                assert_eq!(ours, std, "n {n}, range {range}");
            }
        }
    }

    #[test]
    fn sorts_by_key_like_the_standard_stable_sort() {
        for n in [0, 1, 2, 7, 256, 1000, 16385] {
            for range in [1, 3, 300, 70_000, 1 << 32] {
                let keys = values(n, (n as u64 * 17) ^ range, range);
                let mut ours: Vec<(u32, usize)> = keys.iter().map(|&k| k as u32).zip(0..).collect();
                let mut std = ours.clone();
                sort_by_key(&mut ours, |e| e.0);
                std.sort_by_key(|e| e.0);
                assert_eq!(ours, std, "n {n}, range {range}");
            }
        }
    }

    #[test]
    fn sorts_in_descending_order_and_owned_elements() {
        let mut words: Vec<String> =
            values(300, 9, 40).iter().map(|x| alloc::format!("w{x}")).collect();
        let mut std = words.clone();
        sort_by(&mut words, |a, b| b.cmp(a));
        std.sort_by(|a, b| b.cmp(a));
        assert_eq!(words, std);
        let mut ints = values(257, 5, 1000);
        let mut std = ints.clone();
        sort(&mut ints);
        std.sort_unstable();
        assert_eq!(ints, std);
    }
}
