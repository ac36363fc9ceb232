//! The per-token stages `Engine::next_token` runs, in order: run the last token, close a
//! required call or search a value, choose the token (mask, sample), accept it (and stop).
use alloc::string::String;

use crate::constrained::CLOSING_MARGIN;
use crate::Result;

use super::engine::Engine;
use super::request::{StopReason, Token};
use super::turn::{Output, Steer, Turn};

impl Engine<'_> {
    /// One token of `turn` through the stages (`None`: the context is full).
    pub(super) fn decode(&mut self, turn: &mut Turn) -> Result<Option<Token>> {
        if !self.feed_last(&mut turn.out)? {
            return Ok(None);
        }
        self.close_if_due(turn);
        self.search_if_due(&mut turn.steer)?;
        let id = self.choose(turn);
        Ok(Some(self.accept(turn, id)))
    }

    /// Runs the last sampled token; false (and stopped) where the state has no room for it.
    fn feed_last(&mut self, out: &mut Output) -> Result<bool> {
        let Some(id) = out.unfed else { return Ok(true) };
        if self.position() >= self.info.capacity {
            out.stop = Some(StopReason::ContextFull);
            return Ok(false);
        }
        out.unfed = None;
        self.feed(&[id])?;
        Ok(true)
    }

    /// A required call is closed while the budget still holds its closing, and room for the
    /// model to open one more call first (the largest step the closing can grow by).
    fn close_if_due(&self, turn: &mut Turn) {
        let (steer, out) = (&mut turn.steer, &turn.out);
        let (false, Some(constraint), Some(table)) =
            (steer.closing, &steer.constraint, &self.token_table)
        else {
            return;
        };
        let left = out
            .budget
            .saturating_sub(out.tokens.len())
            .min(self.info.capacity.saturating_sub(self.net.position()) + 1);
        let reserve = *steer.reserve.get_or_insert_with(|| {
            constraint.whole_call(&self.tokenizer, table).map_or(0, |c| c.len())
        });
        if let Some(close) = constraint
            .closing(&self.tokenizer, table)
            .filter(|c| c.len() + reserve + CLOSING_MARGIN >= left)
        {
            steer.chosen = close.into();
            steer.closing = true;
        }
    }

    /// Value search: on entering an argument value, the tokens of its most likely whole value
    /// are chosen ahead (see [`super::search`]).
    fn search_if_due(&mut self, steer: &mut Steer) -> Result<()> {
        let Some(constraint) = steer.constraint.as_mut() else { return Ok(()) };
        let due = steer.value_search && !steer.value_searched && !steer.closing;
        if due && constraint.in_argument_value() {
            steer.value_searched = true;
            let chosen = self.search_value(constraint)?;
            steer.chosen.extend(chosen);
        }
        Ok(())
    }

    /// The next token: one chosen ahead, else a sample of the logits masked by the constraint
    /// and the ids no decoding may pick.
    fn choose(&mut self, turn: &mut Turn) -> u32 {
        if let Some(id) = turn.steer.chosen.pop_front() {
            return id;
        }
        if let (Some(constraint), Some(table)) = (&mut turn.steer.constraint, &self.token_table) {
            constraint.mask(table, &mut self.logits);
        }
        self.never.mask(&mut self.logits);
        turn.out.sampler.sample(&self.logits)
    }

    /// Appends `id` to the completion (the constraint follows it) and decides whether it stops.
    fn accept(&self, turn: &mut Turn, id: u32) -> Token {
        if let (Some(constraint), Some(table)) = (&mut turn.steer.constraint, &self.token_table) {
            constraint.accept(table, id);
            if !constraint.in_argument_value() {
                turn.steer.value_searched = false;
            }
        }
        let out = &mut turn.out;
        out.tokens.push(id);
        let stop = if id == self.tokenizer.eos_id() {
            Some(StopReason::Eos)
        } else if Some(id) == self.im_end {
            Some(StopReason::ImEnd)
        } else {
            None
        };
        let mut text = String::new();
        if stop.is_none() {
            out.decoder.push(&self.tokenizer, id, &mut text);
            out.text.push_str(&text);
        }
        out.unfed = Some(id);
        let spent = out.tokens.len() >= out.budget;
        out.stop = stop.or(spent.then_some(StopReason::MaxTokens));
        Token { id, text }
    }
}
