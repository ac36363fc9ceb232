//! The JS surface (feature `web`): wasm-bindgen exports used by pkg/.
use wasm_bindgen::prelude::*;

/// The crate version, so the JS side can check it loaded the module it expects.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
