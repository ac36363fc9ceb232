//! The byte form of a sequence state, for saving it and loading it into another state of the
//! same model ([`crate::session`]'s snapshots). Every part writes its numbers in order,
//! little-endian, without lengths: a loading state already has the shape the bytes must fill
//! (its model and options decide every length), so a reader only fills buffers it holds and
//! never allocates what the bytes ask for.
use alloc::vec::Vec;

use crate::{Error, Result};

/// Collects the bytes of a state.
#[derive(Default)]
pub struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }

    pub(crate) fn f32s(&mut self, xs: &[f32]) {
        self.0.extend(xs.iter().flat_map(|x| x.to_le_bytes()));
    }

    pub(crate) fn u32s(&mut self, xs: &[u32]) {
        self.0.extend(xs.iter().flat_map(|x| x.to_le_bytes()));
    }

    pub(crate) fn i8s(&mut self, xs: &[i8]) {
        self.0.extend(xs.iter().map(|&x| x as u8));
    }
}

/// Reads a state's bytes back into buffers of the right shape.
pub struct Reader<'b> {
    bytes: &'b [u8],
}

/// The refusal for bytes that do not fit the state they are loaded into.
pub(crate) fn mismatch(field: &'static str) -> Error {
    Error::SnapshotMismatch { field }
}

impl<'b> Reader<'b> {
    pub(crate) fn new(bytes: &'b [u8]) -> Self {
        Reader { bytes }
    }

    fn take(&mut self, n: usize) -> Result<&'b [u8]> {
        if n > self.bytes.len() {
            return Err(Error::BadSnapshot { reason: "state bytes end early" });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    pub(crate) fn f32s(&mut self, out: &mut [f32]) -> Result<()> {
        let b = self.take(out.len().checked_mul(4).ok_or(mismatch("length"))?)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
            *o = f32::from_le_bytes(c.try_into().expect("4 bytes"));
        }
        Ok(())
    }

    pub(crate) fn u32s(&mut self, out: &mut [u32]) -> Result<()> {
        let b = self.take(out.len().checked_mul(4).ok_or(mismatch("length"))?)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
            *o = u32::from_le_bytes(c.try_into().expect("4 bytes"));
        }
        Ok(())
    }

    pub(crate) fn i8s(&mut self, out: &mut [i8]) -> Result<()> {
        let b = self.take(out.len())?;
        for (o, &c) in out.iter_mut().zip(b) {
            *o = c as i8;
        }
        Ok(())
    }

    /// Refuses bytes left over once the state is full.
    pub(crate) fn finish(self) -> Result<()> {
        match self.bytes.is_empty() {
            true => Ok(()),
            false => Err(Error::BadSnapshot { reason: "bytes left after the state" }),
        }
    }
}
