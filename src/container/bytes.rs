//! Bounds-checked little-endian reads. Every read names the section it belongs to, so a
//! short input is reported as `Truncated { section, .. }` instead of panicking.
use crate::{Error, Result};

/// A window of the input that knows its name and where it starts in the file.
#[derive(Clone, Copy)]
pub(crate) struct Le<'a> {
    bytes: &'a [u8],
    section: &'static str,
}

impl<'a> Le<'a> {
    /// The `len` bytes of `input` starting at `start`, or `Truncated` when the input is shorter.
    pub(crate) fn window(
        input: &'a [u8],
        start: u64,
        len: u64,
        section: &'static str,
    ) -> Result<Self> {
        let end = start.checked_add(len).ok_or(Error::Truncated {
            section,
            needed: u64::MAX,
            available: input.len() as u64,
        })?;
        let bytes = slice(input, start, end).ok_or(Error::Truncated {
            section,
            needed: end,
            available: input.len() as u64,
        })?;
        Ok(Self { bytes, section })
    }

    fn array<const N: usize>(&self, at: usize) -> Result<[u8; N]> {
        let end = at.checked_add(N);
        match end.and_then(|end| self.bytes.get(at..end)) {
            Some(b) => {
                let mut out = [0u8; N];
                out.copy_from_slice(b);
                Ok(out)
            }
            None => Err(Error::Truncated {
                section: self.section,
                needed: (at as u64).saturating_add(N as u64),
                available: self.bytes.len() as u64,
            }),
        }
    }

    pub(crate) fn u8(&self, at: usize) -> Result<u8> {
        Ok(self.array::<1>(at)?[0])
    }

    pub(crate) fn u16(&self, at: usize) -> Result<u16> {
        self.array(at).map(u16::from_le_bytes)
    }

    pub(crate) fn u32(&self, at: usize) -> Result<u32> {
        self.array(at).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&self, at: usize) -> Result<u64> {
        self.array(at).map(u64::from_le_bytes)
    }

    pub(crate) fn f32(&self, at: usize) -> Result<f32> {
        self.array(at).map(f32::from_le_bytes)
    }
}

/// `input[start..end]` with u64 bounds, `None` when out of range (also on 32-bit targets).
pub(crate) fn slice(input: &[u8], start: u64, end: u64) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    let end = usize::try_from(end).ok()?;
    input.get(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_little_endian() {
        let data = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        let le = Le::window(&data, 0, 8, "t").unwrap();
        assert_eq!(le.u16(0).unwrap(), 0x0201);
        assert_eq!(le.u32(1).unwrap(), 0x0504_0302);
        assert_eq!(le.u64(0).unwrap(), 0x0807_0605_0403_0201);
        assert_eq!(le.u8(7).unwrap(), 8);
    }

    #[test]
    fn a_read_past_the_window_is_truncated_not_a_panic() {
        let data = [0u8; 8];
        let le = Le::window(&data, 2, 4, "part").unwrap();
        assert_eq!(le.u32(1), Err(Error::Truncated { section: "part", needed: 5, available: 4 }));
        assert!(le.u64(usize::MAX - 2).is_err());
    }

    #[test]
    fn a_window_past_the_input_is_truncated() {
        let data = [0u8; 8];
        assert_eq!(
            Le::window(&data, 4, 8, "dir").err(),
            Some(Error::Truncated { section: "dir", needed: 12, available: 8 })
        );
        assert!(Le::window(&data, u64::MAX, 2, "dir").is_err());
    }
}
