//! Schema-constrained decoding: before each token is chosen, every token that would take the
//! completion outside the tool-call format or the tools' schemas gets a logit of -inf.
//!
//! Allowed completions: an optional `<think>` block, then `<tool_call>[...]</tool_call>` whose
//! calls name a listed tool and give it arguments its schema accepts (declared keys once each,
//! required keys present, enum values from the enum, integers/numbers/booleans/strings where
//! declared), then a stop token (see [`matcher`] for the grammar). Numeric bounds and string
//! formats are left to the model: refusing out-of-range requests is the model's decision
//! (full-schema decoding, [`full_schema`], holds the whole schema instead).
//! Extractive mode also makes every free-text string argument a copy of a piece of the user's
//! request, for models that slip when re-spelling what they were told ([`span`]). With a call
//! required, the engine writes the shortest finish of the call itself once the budget left
//! holds no more than that finish plus one more whole call ([`closing`]), so a required call
//! is always a parsed call when the budget can hold one.
//!
//! A token is checked by running its decoded bytes through a copy of the byte-level matcher;
//! most tokens are rejected by their first byte, which is tested once per step for all 256
//! values. The cost per step is a small multiple of the vocabulary size, next to a forward pass.
mod bounded_number;
mod closing;
mod dfa;
mod formats;
mod full_schema;
#[cfg(test)]
mod full_tests;
mod full_value;
mod json_value;
mod literals;
mod markers;
mod matcher;
mod pattern;
mod schema;
#[cfg(test)]
mod shape_tests;
mod span;
#[cfg(test)]
mod tests;
mod unions;

use alloc::vec;
use alloc::vec::Vec;

use crate::json::Value;
use crate::tokenizer::{Tokenizer, META_SPACE};
use crate::Result;
pub use closing::MARGIN as CLOSING_MARGIN;
use matcher::Matcher;
use schema::Grammar;

/// Decoded bytes of every token a logits row can choose, built once per model.
pub struct TokenTable {
    /// `bytes[ends[i-1]..ends[i]]` are token `i`'s bytes; empty for tokens that produce no
    /// text (control and unknown pieces), which constrained decoding never picks.
    ends: Vec<u32>,
    bytes: Vec<u8>,
    /// Tokens that end the turn.
    stops: Vec<u32>,
}

impl TokenTable {
    /// Table for ids `0..len`; `stops` are the end-of-turn ids (EOS, `<|im_end|>`).
    pub fn new(tokenizer: &Tokenizer, len: usize, stops: &[u32]) -> TokenTable {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(len);
        let mut space = [0u8; 4];
        let space: &[u8] = META_SPACE.encode_utf8(&mut space).as_bytes();
        for id in 0..len as u32 {
            let piece = tokenizer.token_bytes(id);
            // Decoding turns the word-boundary mark into a space.
            let mut rest = piece;
            while !rest.is_empty() {
                if rest.starts_with(space) {
                    bytes.push(b' ');
                    rest = &rest[space.len()..];
                } else {
                    bytes.push(rest[0]);
                    rest = &rest[1..];
                }
            }
            ends.push(bytes.len() as u32);
        }
        TokenTable { ends, bytes, stops: stops.to_vec() }
    }

    fn token(&self, id: usize) -> &[u8] {
        if id >= self.len() {
            return &[];
        }
        let start = if id == 0 { 0 } else { self.ends[id - 1] as usize };
        &self.bytes[start..self.ends[id] as usize]
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether `id` ends the turn.
    pub fn is_stop(&self, id: u32) -> bool {
        self.stops.contains(&id)
    }
}

/// Where a [`Constraint`] is in the turn ([`Constraint::checkpoint`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint(Matcher);

/// The constraint of one request: the compiled tools and how far the completion has got.
pub struct Constraint {
    grammar: Grammar,
    matcher: Matcher,
    /// Scratch for the mask, sized to the token table once.
    allowed: Vec<bool>,
}

impl Constraint {
    /// A constraint for a flat tool list (`[{name, parameters}]`; `Null` means no tools, which
    /// allows only the refusal `[]`). With `extract_from` (the user's request), string
    /// arguments without an `enum` must be copied from it, ignoring ASCII case.
    pub fn new(tools: &Value, extract_from: Option<&str>) -> Result<Constraint> {
        Ok(Constraint {
            grammar: Grammar::new(tools, extract_from)?,
            matcher: Matcher::default(),
            allowed: Vec::new(),
        })
    }

    /// Masks the refusal `[]`, so the answer calls at least one tool (OpenAI's `tool_choice:
    /// "required"`). Without tools the refusal is all there is, and it stays.
    pub fn require_call(&mut self) {
        self.grammar.require_call = !self.grammar.tools.is_empty();
    }

    /// Holds each call's arguments to its tool's whole JSON schema (structured output: nested
    /// values, bounds, lengths, patterns, formats, unions; see [`full_schema`]). A schema
    /// keyword the matcher cannot hold, or a schema no value meets, is refused
    /// (`Error::Schema`, with its path) rather than ignored.
    pub fn full_schema(&mut self, tools: &Value) -> Result<()> {
        self.grammar.full = Some(full_schema::FullSchemas::new(tools)?);
        Ok(())
    }

    /// Sets the logits of tokens the format does not allow next to -inf. When nothing is
    /// allowed (a vocabulary that cannot spell what must come next), only the stop tokens
    /// stay, so the turn ends instead of running on unconstrained.
    pub fn mask(&mut self, table: &TokenTable, logits: &mut [f32]) {
        let n = logits.len().min(table.len());
        if self.allowed.len() != n {
            self.allowed = vec![false; n];
        }
        let mut first_byte = [false; 256];
        for (b, ok) in first_byte.iter_mut().enumerate() {
            *ok = self.matcher.clone().advance(&self.grammar, b as u8);
        }
        let can_stop = self.matcher.can_stop();
        let mut any = false;
        for (id, allowed) in self.allowed.iter_mut().enumerate() {
            let bytes = table.token(id);
            *allowed = if table.stops.contains(&(id as u32)) {
                can_stop
            } else {
                !bytes.is_empty()
                    && first_byte[bytes[0] as usize]
                    && self.matcher.clone().feed(&self.grammar, bytes)
            };
            any |= *allowed;
        }
        if !any {
            for &stop in &table.stops {
                if let Some(allowed) = self.allowed.get_mut(stop as usize) {
                    *allowed = true;
                }
            }
        }
        for (logit, &allowed) in logits.iter_mut().zip(&self.allowed) {
            if !allowed {
                *logit = f32::NEG_INFINITY;
            }
        }
        for logit in logits.iter_mut().skip(n) {
            *logit = f32::NEG_INFINITY;
        }
    }

    /// With a call required: the tokens that finish the turn from here as briefly as the
    /// matcher finds (see [`closing`]); `None` when no call is required, the turn is already
    /// finished, or the vocabulary cannot spell the closing.
    pub fn closing(&self, tok: &Tokenizer, table: &TokenTable) -> Option<Vec<u32>> {
        if !self.grammar.require_call || self.matcher.can_stop() {
            return None;
        }
        closing::closing_tokens(&self.matcher, &self.grammar, tok, table)
    }

    /// With a call required: the tokens of the shortest whole turn [`Self::closing`] finds
    /// from its start (what opening one more call can add to a closing, at most, for the tool
    /// it picks).
    pub fn whole_call(&self, tok: &Tokenizer, table: &TokenTable) -> Option<Vec<u32>> {
        if !self.grammar.require_call {
            return None;
        }
        closing::closing_tokens(&Matcher::default(), &self.grammar, tok, table)
    }

    /// Whether the turn may end here (what it holds is whole).
    pub fn can_stop(&self) -> bool {
        self.matcher.can_stop()
    }

    /// Whether the completion is inside one argument's value.
    pub fn in_argument_value(&self) -> bool {
        self.matcher.in_argument_value(&self.grammar)
    }

    /// Where the constraint is, to come back to with [`Self::restore`].
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint(self.matcher)
    }

    pub fn restore(&mut self, at: Checkpoint) {
        self.matcher = at.0;
    }

    /// Moves past the chosen token.
    pub fn accept(&mut self, table: &TokenTable, id: u32) {
        if (id as usize) < table.len() && !table.stops.contains(&id) {
            self.matcher.feed(&self.grammar, table.token(id as usize));
        }
    }
}
