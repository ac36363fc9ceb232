//! A conversation above the engine: the turns so far, sent again with every new message.
//!
//! Every turn stays in the conversation until [`Conversation::reset`], as in upstream's
//! stateful `complete()`. Each request renders the whole history
//! ([`crate::prompt::render_conversation`]); the engine's prefix cache runs only what the new
//! turn adds, so a conversation costs its new tokens, and its results equal a fresh session's
//! prefill of the whole rendering.
use alloc::string::String;
use alloc::vec::Vec;

use super::{Completion, Engine, Request, Token};
use crate::prompt::{Role, Turn};
use crate::Result;

/// Messages after which upstream warns that unrelated queries lose accuracy without a reset.
pub const UNRESET_TURNS: usize = 4;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conversation {
    turns: Vec<(Role, String)>,
    /// Messages sent since the last reset.
    sent: usize,
}

impl Conversation {
    pub fn new() -> Self {
        Self::default()
    }

    /// The turns so far, oldest first.
    pub fn turns(&self) -> impl Iterator<Item = Turn<'_>> {
        self.turns.iter().map(|(role, text)| Turn { role: *role, text })
    }

    /// Forgets the turns (the engine keeps its state: the next prompt still shares the system
    /// prompt and tools with it).
    pub fn reset(&mut self) {
        self.turns.clear();
        self.sent = 0;
    }

    /// Messages sent since the last reset. Past [`UNRESET_TURNS`] unrelated queries lose
    /// accuracy and confidence (upstream warns when the count first passes it).
    pub fn sent(&self) -> usize {
        self.sent
    }

    /// Sends `text` as the next turn (`role`: `User`, or `Tool` for call results) with
    /// `template`'s tools, system prompt, date and decoding options, streaming tokens to
    /// `on_token` (false stops). The exchange joins the conversation once it has finished; a
    /// failed request (`context_full`, say) leaves the conversation as it was.
    pub fn send(
        &mut self,
        engine: &mut Engine,
        template: &Request,
        role: Role,
        text: &str,
        mut on_token: impl FnMut(&Token) -> bool,
    ) -> Result<Completion> {
        let mut turns: Vec<Turn> = self.turns().collect();
        // A user message is the request's query; call results are a tool turn answered as is.
        let query = match role {
            Role::User => text,
            _ => {
                turns.push(Turn { role, text });
                ""
            }
        };
        let req = Request { query, turns: &turns, ..template.clone() };
        engine.start(&req)?;
        while let Some(token) = engine.next_token()? {
            if !on_token(&token) {
                engine.abort();
            }
        }
        let done = engine.finish()?;
        self.turns.push((role, text.into()));
        self.turns.push((Role::Assistant, done.response.text.clone()));
        self.sent += 1;
        Ok(done)
    }
}
