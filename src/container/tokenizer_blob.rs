//! Framing of the RAW tokenizer attachment: a 24-byte header (`u32 n_pieces`, four special ids,
//! two flag bytes, padding), then `n_pieces` records `f32 score, u8 type, u16 len, len bytes`.
//!
//! The container checks only what ties the blob to the model and keeps it walkable: every
//! record fits, nothing trails, and no piece id or special id falls outside the model's
//! vocabulary. The piece contents (UTF-8, types, byte pieces) are the tokenizer's to judge.
use super::bytes::Le;
use crate::{Error, Result};

const HEADER_LEN: usize = 24;
const RECORD_LEN: usize = 7;

/// Counts read from the attachment's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenizerSummary {
    pub pieces: u32,
    pub pad: u32,
    pub eos: u32,
    pub bos: u32,
    pub unk: u32,
}

fn bad(offset: usize, reason: &'static str) -> Error {
    Error::BadTokenizer { offset: offset as u64, reason }
}

/// Walks the records of `blob` (offsets in errors are relative to the blob).
pub fn check(blob: &[u8], vocab: u32) -> Result<TokenizerSummary> {
    if blob.len() < HEADER_LEN {
        return Err(bad(blob.len(), "shorter than its 24-byte header"));
    }
    let le = Le::window(blob, 0, blob.len() as u64, "tokenizer")?;
    let pieces = le.u32(0)?;
    let summary = TokenizerSummary {
        pieces,
        pad: le.u32(4)?,
        eos: le.u32(8)?,
        bos: le.u32(12)?,
        unk: le.u32(16)?,
    };
    if pieces == 0 {
        return Err(bad(0, "no pieces"));
    }
    if pieces > vocab {
        return Err(bad(0, "more pieces than the model's vocabulary"));
    }
    for (i, id) in [summary.pad, summary.eos, summary.bos, summary.unk].into_iter().enumerate() {
        if id >= pieces {
            return Err(bad(4 + 4 * i, "special token id outside the pieces"));
        }
    }
    let mut off = HEADER_LEN;
    for _ in 0..pieces {
        let len = le.u16(off + 5).map_err(|_| bad(off, "piece record runs past the end"))?;
        off += RECORD_LEN + usize::from(len);
        if off > blob.len() {
            return Err(bad(off - usize::from(len), "piece surface runs past the end"));
        }
    }
    if off != blob.len() {
        return Err(bad(off, "trailing bytes after the last piece"));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn blob(pieces: &[&str]) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [pieces.len() as u32, 0, 1, 2, 3] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&[1, 1, 0, 0]);
        for p in pieces {
            b.extend_from_slice(&0f32.to_le_bytes());
            b.push(0);
            b.extend_from_slice(&(p.len() as u16).to_le_bytes());
            b.extend_from_slice(p.as_bytes());
        }
        b
    }

    const PIECES: [&str; 5] = ["<pad>", "</s>", "<s>", "<unk>", "ab"];

    #[test]
    fn a_well_framed_blob_reports_its_counts() {
        let s = check(&blob(&PIECES), 5).unwrap();
        assert_eq!(s, TokenizerSummary { pieces: 5, pad: 0, eos: 1, bos: 2, unk: 3 });
    }

    #[test]
    fn more_pieces_than_the_vocabulary_are_refused() {
        assert!(matches!(check(&blob(&PIECES), 4), Err(Error::BadTokenizer { offset: 0, .. })));
    }

    #[test]
    fn a_surface_length_past_the_end_is_refused() {
        let mut b = blob(&PIECES);
        let last = b.len() - 2 - 2;
        b[last..last + 2].copy_from_slice(&9u16.to_le_bytes());
        assert!(matches!(
            check(&b, 5),
            Err(Error::BadTokenizer { reason: "piece surface runs past the end", .. })
        ));
    }

    #[test]
    fn trailing_bytes_and_short_blobs_are_refused() {
        let mut b = blob(&PIECES);
        b.push(0);
        assert!(matches!(
            check(&b, 5),
            Err(Error::BadTokenizer { reason: "trailing bytes after the last piece", .. })
        ));
        for cut in [0, 3, 23, 30] {
            assert!(
                matches!(check(&blob(&PIECES)[..cut], 5), Err(Error::BadTokenizer { .. })),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn special_ids_must_name_pieces() {
        let mut b = blob(&PIECES);
        b[8..12].copy_from_slice(&5u32.to_le_bytes());
        assert!(matches!(check(&b, 5), Err(Error::BadTokenizer { offset: 8, .. })));
    }
}
