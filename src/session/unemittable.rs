//! Ids the model must never emit, masked out of every decoding mode.
//!
//! A completion is text, ended by a stop token. Some ids cannot be part of one: `<pad>` (the
//! confidence and router heads refuse a sequence holding it, so sampling it failed the whole
//! request), `<s>` (only ever the first prompt id), `<unk>` and every other control or unknown
//! piece (they decode to nothing), and ids past the tokenizer's piece table (a logits row may
//! be wider than the vocabulary). A small model at a high temperature does give them mass, so
//! each step sets their logits to -inf before greedy choice, sampling, constrained decoding or
//! value search picks a token. EOS and the chat markers stay: they end a turn or are the
//! tool-call format.
use alloc::vec::Vec;

use crate::tokenizer::{PieceKind, Tokenizer};

#[derive(Clone, Debug)]
pub(super) struct Unemittable {
    /// Ids below the piece table's end, ascending.
    ids: Vec<u32>,
    /// Every id from here on (the piece table's end).
    from: usize,
    /// The stop token kept when nothing else is left (see [`Self::mask`]).
    eos: u32,
}

impl Unemittable {
    pub(super) fn new(tok: &Tokenizer) -> Self {
        let specials = [tok.pad_id(), tok.bos_id(), tok.unk_id()];
        let ids = (0..tok.vocab_len() as u32)
            .filter(|&id| {
                let no_text =
                    matches!(tok.piece(id), Some((_, PieceKind::Control | PieceKind::Unknown)));
                id != tok.eos_id() && (specials.contains(&id) || no_text)
            })
            .collect();
        Unemittable { ids, from: tok.vocab_len(), eos: tok.eos_id() }
    }

    /// Whether the model may emit `id`.
    #[cfg(test)]
    fn allows(&self, id: u32) -> bool {
        (id as usize) < self.from && self.ids.binary_search(&id).is_err()
    }

    /// Sets the logits of the ids the model must not emit to -inf. When no finite logit is
    /// left (a constraint or the model ruled out everything else), EOS gets 0, so the turn
    /// ends instead of picking among forbidden ids.
    pub(super) fn mask(&self, logits: &mut [f32]) {
        for &id in &self.ids {
            if let Some(l) = logits.get_mut(id as usize) {
                *l = f32::NEG_INFINITY;
            }
        }
        for l in logits.iter_mut().skip(self.from) {
            *l = f32::NEG_INFINITY;
        }
        if !logits.iter().any(|l| *l > f32::NEG_INFINITY) {
            if let Some(l) = logits.get_mut(self.eos as usize) {
                *l = 0.0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::Sampler;

    fn default_tokenizer() -> Tokenizer {
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/default.cact")).unwrap();
        Tokenizer::from_blob(crate::container::parse(&bytes).unwrap().tokenizer()).unwrap()
    }

    #[test]
    fn pad_bos_unk_and_textless_pieces_are_masked_eos_and_markers_are_not() {
        let tok = default_tokenizer();
        let never = Unemittable::new(&tok);
        for id in [tok.pad_id(), tok.bos_id(), tok.unk_id(), tok.vocab_len() as u32] {
            assert!(!never.allows(id), "{id}");
        }
        assert!(never.allows(tok.eos_id()));
        for marker in [crate::prompt::IM_END, crate::prompt::TOOL_CALL_START] {
            assert!(never.allows(tok.piece_id(marker).unwrap()), "{marker}");
        }
        // Every other id of the table decodes to text.
        for id in 0..tok.vocab_len() as u32 {
            assert_eq!(
                never.allows(id),
                id == tok.eos_id() || !tok.token_bytes(id).is_empty(),
                "{id}"
            );
        }
    }

    #[test]
    fn no_decoding_mode_picks_a_masked_id_even_when_it_leads() {
        let tok = default_tokenizer();
        let never = Unemittable::new(&tok);
        let width = tok.vocab_len() + 3;
        // The forbidden ids lead by far (one is NaN, which greedy would take first).
        let mut row = alloc::vec![0.0f32; width];
        for id in 0..width as u32 {
            if !never.allows(id) {
                row[id as usize] = 50.0;
            }
        }
        row[tok.unk_id() as usize] = f32::NAN;
        for (t, k, p) in [(0.0, 0, 1.0), (2.0, 0, 1.0), (5.0, 0, 1.0), (5.0, 3, 1.0), (5.0, 0, 0.5)]
        {
            let mut s = Sampler::new(t, k, p, 7).unwrap();
            for _ in 0..200 {
                let mut logits = row.clone();
                never.mask(&mut logits);
                let id = s.sample(&logits);
                assert!(never.allows(id), "T={t} top_k={k} top_p={p}: {id}");
            }
        }
    }

    #[test]
    fn a_row_with_nothing_else_left_ends_the_turn() {
        let tok = default_tokenizer();
        let never = Unemittable::new(&tok);
        let mut logits = alloc::vec![f32::NEG_INFINITY; tok.vocab_len()];
        logits[tok.pad_id() as usize] = 1.0;
        never.mask(&mut logits);
        assert_eq!(Sampler::greedy().sample(&logits), tok.eos_id());
        assert_eq!(Sampler::new(1.0, 0, 1.0, 3).unwrap().sample(&logits), tok.eos_id());
    }
}
