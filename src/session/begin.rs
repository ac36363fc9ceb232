//! The stages of a request's start that `Engine::begin` runs besides rendering and encoding:
//! the constraint it decodes under, and the reuse of what the state already holds.
use alloc::vec::Vec;

use crate::constrained::{Constraint, TokenTable};
use crate::context;
use crate::json::Value;
use crate::prompt::Rendered;
use crate::{Error, Result};

use super::engine::Engine;
use super::prefix;
use super::request::Request;

impl Engine<'_> {
    /// The constraint `req` decodes under (`None`: free decoding), with the token table it
    /// needs built on the first constrained request.
    pub(super) fn constraint(
        &mut self,
        req: &Request,
        tools: Option<&Value>,
    ) -> Result<Option<Constraint>> {
        if req.value_search && req.temperature != 0.0 {
            return Err(Error::InvalidArgument {
                name: "value_search",
                reason: "needs temperature 0 (it replaces greedy choice)",
            });
        }
        let constrain = req.constrained
            || req.extractive
            || req.value_search
            || req.require_call
            || req.full_schema;
        if !constrain {
            return Ok(None);
        }
        let tools = tools.unwrap_or(&Value::Null);
        let mut constraint = Constraint::new(tools, req.extractive.then_some(req.query))?;
        if req.require_call {
            constraint.require_call();
        }
        if req.full_schema {
            constraint.full_schema(tools)?;
        }
        if self.token_table.is_none() {
            let stops: Vec<u32> =
                [Some(self.tokenizer.eos_id()), self.im_end].into_iter().flatten().collect();
            self.token_table = Some(TokenTable::new(&self.tokenizer, self.info.logits_len, &stops));
        }
        Ok(Some(constraint))
    }

    /// Keeps what the state holds of `ids` (the prompt `rendered` encodes to) and returns how
    /// many leading ids that is (see [`super::prefix`]).
    pub(super) fn reuse_prefix(&mut self, rendered: &Rendered, allow: bool, ids: &[u32]) -> usize {
        // Where the next request is likely to part from this one: after the tools, and
        // before the newest message; one token earlier, as the text that follows may join
        // the last token there.
        let boundaries = [rendered.head, rendered.newest].map(|at| {
            let prefix = context::encode_prefix(&self.tokenizer, rendered, allow, at);
            prefix::common_prefix(&prefix, ids).saturating_sub(1)
        });
        self.prefix.begin(&mut *self.net, ids, &boundaries)
    }
}
