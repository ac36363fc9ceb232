//! The SentencePiece-style BPE tokenizer carried in every `.cact` container, ported from the
//! behaviour of upstream's reference encoder/decoder (`RefTokenizer`), which the container
//! format specifies and which agrees with SentencePiece on the models upstream exports.
//!
//! Encoding: spaces become `▁` (U+2581); with `add_dummy_prefix` (Needle 2's exporter always
//! sets it, Needle 3 copies it from the model) one `▁` is prepended; the text is then cut at
//! user-defined pieces (the chat markers), longest first, wherever they occur in template text
//! (upstream cuts everywhere, so a marker typed by a user becomes the marker token; text marked
//! [`Span::literal`] is not cut, see [`Tokenizer::encode_spans`]). Each piece between markers is
//! BPE-merged by score ([`bpe`]); a symbol left without a piece falls back to byte pieces (or
//! `unk`).
//!
//! Decoding concatenates surfaces (byte pieces contribute their byte, control and unknown
//! pieces nothing), decodes UTF-8 replacing invalid sequences with U+FFFD, turns `▁` into a
//! space and, with `add_dummy_prefix`, drops one leading space. Ids outside the piece table
//! (a model's vocabulary may be larger than the tokenizer's) decode to nothing.
mod blob;
mod bpe;
mod incremental;
mod vocab;

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

pub use blob::MAX_PIECE_BYTES;
pub use incremental::IncrementalDecoder;

use crate::{Error, Result};
use vocab::Vocab;

/// The word-boundary mark SentencePiece substitutes for spaces.
pub const META_SPACE: char = '\u{2581}';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    Normal,
    Unknown,
    Control,
    UserDefined,
    /// A byte-fallback piece `<0xHH>` standing for this byte.
    Byte(u8),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    start: u32,
    len: u16,
    score: f32,
    kind: PieceKind,
}

/// A run of text to encode, and whether chat markers in it are markers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span<'t> {
    pub text: &'t str,
    /// Markers in the text become their ids (template text); otherwise they are ordinary text.
    pub markers: bool,
}

impl<'t> Span<'t> {
    /// Text whose markers are the template's own (`<|im_start|>` and the like become their ids).
    pub fn template(text: &'t str) -> Self {
        Span { text, markers: true }
    }

    /// Text from a user, a page or a tool: a marker's text in it is encoded as plain pieces, so
    /// it cannot close a turn or forge a tool call.
    pub fn literal(text: &'t str) -> Self {
        Span { text, markers: false }
    }
}

#[derive(Clone)]
pub struct Tokenizer {
    vocab: Vocab,
    /// `(surface length, id)` of each distinct user-defined surface, longest first.
    markers: Vec<(usize, u32)>,
    /// First bytes of the markers: most positions are rejected with one lookup.
    marker_first_byte: [bool; 256],
    byte_ids: [Option<u32>; 256],
    /// pad, eos, bos, unk.
    specials: [u32; 4],
    add_dummy_prefix: bool,
    byte_fallback: bool,
    /// See [`Tokenizer::max_token_bytes`].
    max_token_bytes: usize,
}

impl Tokenizer {
    /// Parses the RAW tokenizer attachment; malformed or forged blobs give `Error::BadTokenizer`.
    pub fn from_blob(raw: &[u8]) -> Result<Tokenizer> {
        let parsed = blob::parse(raw)?;
        let vocab = Vocab::new(parsed.arena, parsed.pieces);
        let mut byte_ids = [None; 256];
        let mut markers: Vec<(usize, u32)> = Vec::new();
        for (id, piece) in vocab.pieces.iter().enumerate() {
            match piece.kind {
                // Later pieces win, as in upstream's byte table.
                PieceKind::Byte(b) => byte_ids[b as usize] = Some(id as u32),
                PieceKind::UserDefined => {
                    let surface = vocab.surface(id as u32);
                    // A marker encodes to whatever id its surface maps to (the last piece
                    // with that surface), exactly like a dictionary lookup.
                    markers.push((surface.len(), vocab.lookup(surface).unwrap_or(id as u32)));
                }
                _ => {}
            }
        }
        // At one position, two matching markers are prefixes of each other, so "longest in
        // bytes" picks the same one as upstream's "longest in characters".
        crate::sort::sort_by(&mut markers, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        // Equal ids mean equal surfaces, which the sort made adjacent.
        markers.dedup_by_key(|m| m.1);
        let mut marker_first_byte = [false; 256];
        for &(_, id) in &markers {
            marker_first_byte[vocab.surface(id).as_bytes()[0] as usize] = true;
        }
        let longest =
            (0..vocab.pieces.len() as u32).map(|id| vocab.surface(id).len()).max().unwrap_or(0);
        Ok(Tokenizer {
            max_token_bytes: longest.max(4),
            vocab,
            markers,
            marker_first_byte,
            byte_ids,
            specials: parsed.specials,
            add_dummy_prefix: parsed.add_dummy_prefix,
            byte_fallback: parsed.byte_fallback,
        })
    }

    pub fn pad_id(&self) -> u32 {
        self.specials[0]
    }

    pub fn eos_id(&self) -> u32 {
        self.specials[1]
    }

    pub fn bos_id(&self) -> u32 {
        self.specials[2]
    }

    pub fn unk_id(&self) -> u32 {
        self.specials[3]
    }

    /// Number of pieces in the table (ids `0..vocab_len()`).
    pub fn vocab_len(&self) -> usize {
        self.vocab.pieces.len()
    }

    pub fn add_dummy_prefix(&self) -> bool {
        self.add_dummy_prefix
    }

    pub fn byte_fallback(&self) -> bool {
        self.byte_fallback
    }

    /// The id a surface encodes to when it is a whole piece (e.g. `"<|im_end|>"`).
    pub fn piece_id(&self, surface: &str) -> Option<u32> {
        self.vocab.lookup(surface)
    }

    /// Surface and kind of a piece.
    pub fn piece(&self, id: u32) -> Option<(&str, PieceKind)> {
        let piece = self.vocab.pieces.get(id as usize)?;
        Some((self.vocab.surface(id), piece.kind))
    }

    /// Token ids of `text`, without BOS/EOS; markers in it become their ids (upstream's
    /// behaviour, and the template's own markers).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.encode_spans(&[Span::template(text)], usize::MAX).expect("no token limit")
    }

    /// Bytes of text one token covers at most: the longest piece surface, and at least 4 (an
    /// `unk` token covers one whole character). See [`Self::min_tokens`].
    pub fn max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }

    /// The fewest tokens `bytes` bytes of text can encode to.
    ///
    /// Why this is a bound: escaping only widens the text (a space, 1 byte, becomes `▁`, 3
    /// bytes; the dummy prefix adds 3), and every token covers a contiguous run of the escaped
    /// text of at most [`Self::max_token_bytes`] bytes: a normal or marker piece its surface, a
    /// byte-fallback piece one byte, `unk` one character (at most 4 bytes). The tokens tile
    /// the escaped text, so there are at least `escaped / max ≥ bytes / max` of them.
    pub fn min_tokens(&self, bytes: usize) -> usize {
        bytes.div_ceil(self.max_token_bytes)
    }

    /// Token ids of the concatenated `spans` (without BOS/EOS), at most `limit` of them:
    /// text that cannot fit is refused from its length alone, before any work, and encoding
    /// stops at the first marker-delimited segment that overflows (`ContextFull`; `needed` is
    /// then a lower bound). Markers are matched only inside [`Span::template`] spans: a
    /// marker's text inside a [`Span::literal`] span is encoded as ordinary pieces. The spans
    /// join into one text before BPE, so a text with no marker in its literal spans encodes
    /// exactly as [`Self::encode`] encodes the concatenation.
    pub fn encode_spans(&self, spans: &[Span<'_>], limit: usize) -> Result<Vec<u32>> {
        let bytes: usize = spans.iter().map(|s| s.text.len()).sum();
        if self.min_tokens(bytes) > limit {
            return Err(Error::ContextFull { needed: self.min_tokens(bytes), max: limit });
        }
        let mut ids = Vec::new();
        if bytes == 0 {
            return Ok(ids);
        }
        let mut escaped = String::with_capacity(bytes + 3);
        // Escaped byte ranges where markers are not matched.
        let mut literal: Vec<Range<usize>> = Vec::new();
        if self.add_dummy_prefix {
            escaped.push(META_SPACE);
        }
        for span in spans {
            let start = escaped.len();
            for c in span.text.chars() {
                escaped.push(if c == ' ' { META_SPACE } else { c });
            }
            if !span.markers && escaped.len() > start {
                literal.push(start..escaped.len());
            }
        }
        let bytes = escaped.as_bytes();
        let mut next_literal = literal.iter().peekable();
        let (mut segment_start, mut i) = (0, 0);
        while i < bytes.len() {
            // Skip literal text whole; a marker must end before the next literal span.
            while next_literal.peek().is_some_and(|r| r.end <= i) {
                next_literal.next();
            }
            let fence = match next_literal.peek() {
                Some(r) if r.start <= i => {
                    i = r.end;
                    continue;
                }
                Some(r) => r.start,
                None => bytes.len(),
            };
            if let Some((len, id)) = self.marker_at(&escaped[i..fence]) {
                bpe::encode_segment(self, &escaped[segment_start..i], &mut ids);
                ids.push(id);
                i += len;
                segment_start = i;
                if ids.len() > limit {
                    return Err(Error::ContextFull { needed: ids.len(), max: limit });
                }
            } else {
                i += utf8_width(bytes[i]);
            }
        }
        bpe::encode_segment(self, &escaped[segment_start..], &mut ids);
        if ids.len() > limit {
            return Err(Error::ContextFull { needed: ids.len(), max: limit });
        }
        Ok(ids)
    }

    fn marker_at(&self, rest: &str) -> Option<(usize, u32)> {
        if !self.marker_first_byte[rest.as_bytes()[0] as usize] {
            return None;
        }
        self.markers.iter().copied().find(|&(_, id)| rest.starts_with(self.vocab.surface(id)))
    }

    /// Text of `ids` (see the module notes for what is dropped).
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut out = String::new();
        let mut decoder = IncrementalDecoder::new(self);
        for &id in ids {
            decoder.push(self, id, &mut out);
        }
        decoder.finish(&mut out);
        out
    }

    /// The bytes a token contributes to decoded text.
    pub(crate) fn token_bytes(&self, id: u32) -> &[u8] {
        let Some(piece) = self.vocab.pieces.get(id as usize) else {
            return &[];
        };
        match piece.kind {
            PieceKind::Byte(b) => core::slice::from_ref(&BYTES[b as usize]),
            PieceKind::Control | PieceKind::Unknown => &[],
            PieceKind::Normal | PieceKind::UserDefined => self.vocab.surface(id).as_bytes(),
        }
    }
}

/// Every byte value, so a byte piece can lend out a one-byte slice.
static BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = i as u8;
        i += 1;
    }
    table
};

/// Length of the UTF-8 sequence a (valid) leading byte starts.
fn utf8_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests;
