//! Whether a request fits the session's context, decided before the work it would cost.
//!
//! A prompt is BOS + the rendered text's tokens, and one generated token must still fit, so the
//! text may take `capacity - 2` tokens. Text of `n` bytes takes at least
//! [`Tokenizer::min_tokens`]`(n)` tokens, so a request is refused from its lengths alone, before
//! its tools are parsed, its prompt rendered or a byte tokenized; what passes is at most
//! `capacity × max_token_bytes` bytes, so the work and memory that follow are bounded by the
//! capacity, not by the input.
use alloc::vec::Vec;

use crate::prompt::Rendered;
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// How much longer than its compact rendering a tool list's JSON text may be and still be
/// parsed when the compact form alone would nearly fill the context. Re-serialising drops
/// whitespace and turns escapes such as `\u0041` (6 bytes) into the character (1 byte), so the
/// JSON text is no lower bound of the prompt; pretty-printed and escaped JSON stays well
/// within 8×. A tool list past that is refused as `ContextFull` without parsing it.
pub const TOOLS_JSON_SLACK: usize = 8;

/// Tokens the rendered text may take in a session of `capacity` tokens.
fn room(capacity: usize) -> usize {
    capacity.saturating_sub(2)
}

/// The refusal for text of at least `tokens` tokens.
fn full(tokens: usize, capacity: usize) -> Error {
    Error::ContextFull { needed: tokens.saturating_add(2), max: capacity }
}

/// Refuses a request whose texts cannot fit `capacity` tokens, from their byte lengths alone:
/// `verbatim` are the texts the prompt holds as they are (query, system prompt, earlier turns;
/// counting a system prompt's surrounding whitespace only weakens the bound), `tools_json` the
/// tool list, allowed [`TOOLS_JSON_SLACK`].
pub fn check_request<'t>(
    tok: &Tokenizer,
    capacity: usize,
    verbatim: impl IntoIterator<Item = &'t str>,
    tools_json: &str,
) -> Result<()> {
    let verbatim = verbatim
        .into_iter()
        .fold(0usize, |n, t| n.saturating_add(crate::prompt::python_strip(t).len()));
    let tools = tools_json.trim().len() / TOOLS_JSON_SLACK;
    let least = tok.min_tokens(verbatim.saturating_add(tools));
    if least > room(capacity) {
        return Err(full(least, capacity));
    }
    Ok(())
}

/// `[BOS] + tokens` of a rendered prompt, refused (`ContextFull`) when it leaves no room for a
/// generated token in `capacity`; the caller's text is literal unless `allow_markers`.
pub fn encode_prompt(
    tok: &Tokenizer,
    prompt: &Rendered,
    allow_markers: bool,
    capacity: usize,
) -> Result<Vec<u32>> {
    let text =
        tok.encode_spans(&prompt.spans(allow_markers), room(capacity)).map_err(|e| match e {
            Error::ContextFull { needed, .. } => full(needed, capacity),
            other => other,
        })?;
    let mut ids = Vec::with_capacity(text.len() + 1);
    ids.push(tok.bos_id());
    ids.extend(text);
    Ok(ids)
}

/// `[BOS] + tokens` of the prompt's first `end` bytes, encoded as [`encode_prompt`] encodes the
/// whole (the caller's text literal unless `allow_markers`).
pub fn encode_prefix(
    tok: &Tokenizer,
    prompt: &Rendered,
    allow_markers: bool,
    end: usize,
) -> Vec<u32> {
    let mut spans = prompt.spans(allow_markers);
    let mut at = 0;
    spans.retain_mut(|s| {
        let keep = at < end;
        let len = s.text.len();
        s.text = &s.text[..len.min(end.saturating_sub(at))];
        at += len;
        keep
    });
    let mut ids = alloc::vec![tok.bos_id()];
    // Without a token limit encoding cannot fail; matched rather than `expect`ed so the module
    // carries no Debug formatting of `Error` (its derive and core's debug builders, ~4 KB).
    match tok.encode_spans(&spans, usize::MAX) {
        Ok(more) => ids.extend(more),
        Err(_) => unreachable!("no token limit"),
    }
    ids
}
