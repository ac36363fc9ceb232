//! The JS surface (feature `web`): wasm-bindgen exports used by pkg/worker.js.
//!
//! One class, [`Session`], wraps the generation-agnostic [`crate::session::Engine`]. Every failure
//! crosses into JS as an `Error` named `NeedleError` with the core's stable `code`; nothing here
//! panics on caller input.
use wasm_bindgen::prelude::*;

#[cfg(feature = "gpu")]
mod call_args;
mod calls;
mod js;
mod session;
mod snapshot;
#[cfg(feature = "gpu")]
mod suspend;
#[cfg(all(feature = "threads", target_arch = "wasm32"))]
mod threads;

pub use session::{request_options, reserve, Session};

/// The crate version, so the JS side can check it loaded the module it expects.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
