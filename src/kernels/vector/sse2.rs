//! x86-64 SSE2 twin of [`crate::kernels::vector::dot_i8_i8_rows`] (SSE2 is part of x86-64, so no run-time
//! detection): the compiler's own vectorisation of the scalar kernel widens 4 bytes at a time;
//! here 16 bytes are widened to 16-bit and multiplied-and-paired by `pmaddwd`. Integer sums are
//! exact, so the result equals the scalar kernel's in any order.
use core::arch::x86_64::*;

/// Rows of `a` per pass: their accumulators stay in registers.
const ROWS: usize = 8;

/// The 16 bytes at `p` sign-extended to two i16x8 (low and high halves).
/// SAFETY: 16 readable bytes at `p`.
#[inline(always)]
unsafe fn widen(p: *const i8) -> (__m128i, __m128i) {
    // SAFETY: 16 bytes (caller); SSE2 is baseline on x86-64.
    unsafe {
        let v = _mm_loadu_si128(p as *const __m128i);
        (_mm_srai_epi16::<8>(_mm_unpacklo_epi8(v, v)), _mm_srai_epi16::<8>(_mm_unpackhi_epi8(v, v)))
    }
}

pub(crate) fn dot_i8_i8_rows(a: &[i8], b: &[i8], out: &mut [i32]) {
    let d = b.len();
    let full = d - d % 16;
    for (g0, o) in (0..out.len()).step_by(ROWS).zip(out.chunks_mut(ROWS)) {
        // SAFETY: SSE2 is baseline on x86-64.
        let mut acc = [unsafe { _mm_setzero_si128() }; ROWS];
        for c in (0..full).step_by(16) {
            // SAFETY: 16-byte chunks inside b and inside each row of a (a.len() = rows * d).
            unsafe {
                let (yl, yh) = widen(b.as_ptr().add(c));
                for (g, acc) in acc[..o.len()].iter_mut().enumerate() {
                    let (xl, xh) = widen(a.as_ptr().add((g0 + g) * d + c));
                    *acc = _mm_add_epi32(
                        *acc,
                        _mm_add_epi32(_mm_madd_epi16(xl, yl), _mm_madd_epi16(xh, yh)),
                    );
                }
            }
        }
        for (g, (o, acc)) in o.iter_mut().zip(acc).enumerate() {
            let mut lanes = [0i32; 4];
            // SAFETY: a 16-byte store into a 4 x i32 array.
            unsafe { _mm_storeu_si128(lanes.as_mut_ptr() as *mut __m128i, acc) };
            let mut s = lanes.iter().fold(0i32, |s, &l| s.wrapping_add(l));
            for (&x, &y) in a[(g0 + g) * d + full..(g0 + g + 1) * d].iter().zip(&b[full..]) {
                s = s.wrapping_add(i32::from(x) * i32::from(y));
            }
            *o = s;
        }
    }
}
