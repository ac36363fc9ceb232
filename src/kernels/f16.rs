//! IEEE 754 binary16 -> f32, exact for every bit pattern (normals, subnormals, zeros, inf, NaN).
//!
//! Finite halves are widened with one multiply: placing the 15 magnitude bits at the top of an
//! f32's exponent/mantissa fields gives the right mantissa with an exponent 112 too small (127 - 15
//! bias difference), and multiplying by 2^112 fixes it exactly — also for halves that are
//! subnormal, which land on f32 subnormals that the multiply normalises. No branch on the class
//! except the single all-ones exponent test for inf/NaN.

const TWO_POW_112: u32 = (112 + 127) << 23;

/// Widen one little-endian-decoded half to f32, exactly.
#[inline]
pub fn to_f32(h: u16) -> f32 {
    let sign = (u32::from(h) & 0x8000) << 16;
    let mag = u32::from(h) & 0x7fff;
    if mag >= 0x7c00 {
        // inf or NaN: keep the payload (the quiet bit lands on f32's quiet bit).
        return f32::from_bits(sign | 0x7f80_0000 | ((mag & 0x03ff) << 13));
    }
    let widened = f32::from_bits(mag << 13) * f32::from_bits(TWO_POW_112);
    f32::from_bits(widened.to_bits() | sign)
}

/// Half at position `i` of a little-endian FP16 byte array. Caller guarantees `2 * i + 1 < bytes.len()`.
#[inline]
pub(crate) fn at(bytes: &[u8], i: usize) -> f32 {
    to_f32(u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]))
}

/// Decode `out.len()` little-endian halves from `bytes` (which must hold exactly `2 * out.len()` bytes).
pub fn decode_into(bytes: &[u8], out: &mut [f32]) {
    assert_eq!(
        bytes.len(),
        2 * out.len(),
        "f16::decode_into: byte length must be twice the output length"
    );
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *o = to_f32(u16::from_le_bytes([pair[0], pair[1]]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_bit_patterns_decode_to_their_exact_values() {
        let cases: &[(u16, f32)] = &[
            (0x0000, 0.0),
            (0x3c00, 1.0),
            (0xbc00, -1.0),
            (0x4000, 2.0),
            (0x3555, 0.333_251_95),
            (0x7bff, 65504.0),
            (0xfbff, -65504.0),
            (0x0400, 6.103_515_6e-5), // smallest normal, 2^-14
            (0x0001, 5.960_464_5e-8), // smallest subnormal, 2^-24
            (0x03ff, 6.097_555e-5),   // largest subnormal, 1023 * 2^-24
            (0x8001, -5.960_464_5e-8),
            (0x3bff, 0.999_511_7),
            (0x2e66, 0.099_975_586),
        ];
        for &(bits, want) in cases {
            assert_eq!(to_f32(bits).to_bits(), want.to_bits(), "half {bits:#06x}");
        }
    }

    #[test]
    fn subnormals_decode_to_their_integer_multiple_of_two_to_minus_24() {
        for m in 1u16..0x400 {
            assert_eq!(to_f32(m), m as f32 * (-24f32).exp2());
            assert_eq!(to_f32(0x8000 | m), -(m as f32) * (-24f32).exp2());
        }
    }

    #[test]
    fn every_finite_half_matches_the_textbook_formula() {
        for h in 0u16..=0xffff {
            let e = (h >> 10) & 0x1f;
            if e == 0x1f {
                continue;
            }
            let m = f64::from(h & 0x3ff);
            let mag = if e == 0 {
                m * 2f64.powi(-24)
            } else {
                (1.0 + m / 1024.0) * 2f64.powi(i32::from(e) - 15)
            };
            let want = if h & 0x8000 != 0 { -mag } else { mag };
            assert_eq!(to_f32(h).to_bits(), (want as f32).to_bits(), "half {h:#06x}");
        }
    }

    #[test]
    fn negative_zero_keeps_its_sign() {
        assert_eq!(to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn infinities_and_nans_keep_their_class_sign_and_payload() {
        assert_eq!(to_f32(0x7c00), f32::INFINITY);
        assert_eq!(to_f32(0xfc00), f32::NEG_INFINITY);
        let qnan = to_f32(0x7e00);
        assert!(qnan.is_nan());
        assert_eq!(qnan.to_bits(), 0x7fc0_0000);
        let payload = to_f32(0xfd01);
        assert!(payload.is_nan());
        assert_eq!(payload.to_bits(), 0xffa0_2000);
    }

    #[test]
    fn decode_into_reads_little_endian_pairs() {
        let bytes = [0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00];
        let mut out = [0.0f32; 3];
        decode_into(&bytes, &mut out);
        assert_eq!(out, [1.0, -2.0, 5.960_464_5e-8]);
    }
}
