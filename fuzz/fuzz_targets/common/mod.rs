//! What the targets share: the embedded default model's tokenizer (a real vocabulary with the
//! chat markers and byte fallback), parsed once.
// Each target includes this module and uses part of it.
#![allow(dead_code)]
use std::sync::OnceLock;

use needle_web::container;
use needle_web::tokenizer::Tokenizer;

pub const DEFAULT_MODEL: &[u8] = include_bytes!("../../../www/models/default.cact");

pub fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| {
        Tokenizer::from_blob(container::parse(DEFAULT_MODEL).unwrap().tokenizer()).unwrap()
    })
}

/// Splits `data` at the first `n - 1` zero bytes into `n` parts (missing parts are empty).
pub fn split(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut parts: Vec<&[u8]> = data.splitn(n, |&b| b == 0).collect();
    parts.resize(n, &[]);
    parts
}
