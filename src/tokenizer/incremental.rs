//! Streaming detokenisation: text comes out as tokens arrive, never splitting a UTF-8
//! character, and the concatenated output equals [`Tokenizer::decode`] of all tokens (which is
//! built on this). Bytes of an unfinished character are held back until it completes; an
//! invalid sequence becomes U+FFFD exactly where a whole-text lossy decode would put it.
use alloc::string::String;
use alloc::vec::Vec;

use super::{Tokenizer, META_SPACE};

#[derive(Debug, Clone)]
pub struct IncrementalDecoder {
    /// Bytes of a character still waiting for its continuation bytes (at most 3).
    pending: Vec<u8>,
    /// Whether any character has been produced yet (the dummy-prefix space is the first one).
    started: bool,
    add_dummy_prefix: bool,
}

impl IncrementalDecoder {
    pub fn new(tokenizer: &Tokenizer) -> Self {
        IncrementalDecoder {
            pending: Vec::new(),
            started: false,
            add_dummy_prefix: tokenizer.add_dummy_prefix,
        }
    }

    /// Appends the text that token `id` completes to `out`.
    pub fn push(&mut self, tokenizer: &Tokenizer, id: u32, out: &mut String) {
        let bytes = tokenizer.token_bytes(id);
        if bytes.is_empty() {
            return;
        }
        self.pending.extend_from_slice(bytes);
        let mut rest: &[u8] = &self.pending;
        let mut text = String::new();
        loop {
            match core::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // `valid_up_to` marks a prefix that is valid UTF-8, so this never drops text.
                    text.push_str(core::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[n..];
                        }
                        // An unfinished character at the end: wait for more bytes.
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        let held = rest.len();
        let start = self.pending.len() - held;
        self.pending.drain(..start);
        self.emit(&text, out);
    }

    /// Ends the stream: an unfinished character becomes U+FFFD. The decoder is then fresh.
    pub fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.emit("\u{fffd}", out);
        }
        self.started = false;
    }

    fn emit(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            let c = if c == META_SPACE { ' ' } else { c };
            if !self.started {
                self.started = true;
                if self.add_dummy_prefix && c == ' ' {
                    continue;
                }
            }
            out.push(c);
        }
    }
}
