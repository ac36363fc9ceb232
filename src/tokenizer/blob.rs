//! Reading the RAW tokenizer attachment of a `.cact` container.
//!
//! Layout (little-endian): a 24-byte header `u32 n_pieces, u32 pad, u32 eos, u32 bos, u32 unk,
//! u8 add_dummy_prefix, u8 byte_fallback, u16 reserved`, then `n_pieces` records in id order:
//! `f32 score, u8 type, u16 len, len bytes of UTF-8 surface`.
//!
//! Upstream's reader trusts the blob; this one checks everything a forged blob could use to
//! make the encoder misbehave (NaN scores break the merge order, empty markers would never
//! advance, byte pieces must name their byte, a huge piece would loosen the length bound) and refuses with [`Error::BadTokenizer`].
use alloc::string::String;
use alloc::vec::Vec;

use super::{Piece, PieceKind};
use crate::{Error, Result};

const HEADER_LEN: usize = 24;
const RECORD_LEN: usize = 7;

/// The longest piece surface accepted, in bytes. A request is refused from its length alone
/// when it cannot fit ([`crate::context`]), and what passes is at most the session's capacity
/// times the longest piece: a forged 65,535-byte piece let a 50 MB query through to be
/// tokenized whole (1.2 GB). SentencePiece's trainer caps pieces at 16 characters by default
/// (512 at most, so 2 KB of UTF-8 in theory); the default model's longest is 64 bytes and
/// upstream's fixtures' 17.
pub const MAX_PIECE_BYTES: usize = 1024;

/// Everything the blob says, before the lookup structures are built.
pub(super) struct Parsed {
    pub arena: String,
    pub pieces: Vec<Piece>,
    pub specials: [u32; 4],
    pub add_dummy_prefix: bool,
    pub byte_fallback: bool,
}

fn bad(offset: usize, reason: &'static str) -> Error {
    Error::BadTokenizer { offset: offset as u64, reason }
}

fn u32_at(raw: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]])
}

fn flag(raw: &[u8], at: usize) -> Result<bool> {
    match raw[at] {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(bad(at, "flag byte is neither 0 nor 1")),
    }
}

pub(super) fn parse(raw: &[u8]) -> Result<Parsed> {
    if raw.len() < HEADER_LEN {
        return Err(bad(raw.len(), "blob shorter than its 24-byte header"));
    }
    if raw.len() > u32::MAX as usize {
        return Err(bad(0, "blob larger than 4 GiB"));
    }
    let n = u32_at(raw, 0) as usize;
    if n == 0 {
        return Err(bad(0, "no pieces"));
    }
    // Every record takes at least RECORD_LEN bytes: bound the count before allocating for it.
    if n > (raw.len() - HEADER_LEN) / RECORD_LEN {
        return Err(bad(0, "piece count exceeds what the blob can hold"));
    }
    let specials = [u32_at(raw, 4), u32_at(raw, 8), u32_at(raw, 12), u32_at(raw, 16)];
    for (i, &id) in specials.iter().enumerate() {
        if id as usize >= n {
            return Err(bad(4 + 4 * i, "special token id outside the vocabulary"));
        }
    }
    // The stop token a model emits is run through the heads, which refuse padding.
    if specials[0] == specials[1] {
        return Err(bad(8, "eos id is the padding id"));
    }
    let add_dummy_prefix = flag(raw, 20)?;
    let byte_fallback = flag(raw, 21)?;

    let mut arena = String::new();
    let mut pieces = Vec::with_capacity(n);
    let mut off = HEADER_LEN;
    for _ in 0..n {
        if raw.len() - off < RECORD_LEN {
            return Err(bad(off, "piece record runs past the end"));
        }
        let score = f32::from_le_bytes([raw[off], raw[off + 1], raw[off + 2], raw[off + 3]]);
        let kind_code = raw[off + 4];
        let len = u16::from_le_bytes([raw[off + 5], raw[off + 6]]) as usize;
        let record = off;
        off += RECORD_LEN;
        if score.is_nan() {
            return Err(bad(record, "piece score is NaN"));
        }
        if len > MAX_PIECE_BYTES {
            return Err(bad(record + 5, "piece longer than 1024 bytes"));
        }
        let bytes =
            raw.get(off..off + len).ok_or_else(|| bad(off, "piece surface runs past the end"))?;
        let surface =
            core::str::from_utf8(bytes).map_err(|_| bad(off, "piece surface is not UTF-8"))?;
        if surface.is_empty() {
            return Err(bad(record, "empty piece"));
        }
        let kind = match kind_code {
            0 => PieceKind::Normal,
            1 => PieceKind::Unknown,
            2 => PieceKind::Control,
            3 => PieceKind::UserDefined,
            4 => PieceKind::Byte(
                byte_value(surface).ok_or_else(|| bad(off, "byte piece is not <0xHH>"))?,
            ),
            _ => return Err(bad(record + 4, "unknown piece type")),
        };
        pieces.push(Piece { start: arena.len() as u32, len: len as u16, score, kind });
        arena.push_str(surface);
        off += len;
    }
    if off != raw.len() {
        return Err(bad(off, "trailing bytes after the last piece"));
    }
    Ok(Parsed { arena, pieces, specials, add_dummy_prefix, byte_fallback })
}

/// The byte a `<0xHH>` piece stands for.
fn byte_value(surface: &str) -> Option<u8> {
    let hex = surface.strip_prefix("<0x")?.strip_suffix('>')?;
    // Exactly two hex digits (from_str_radix alone would also take a sign).
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}
