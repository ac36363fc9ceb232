//! needle-web: run Needle tool-calling transformers (`.cact` containers) on the client.
//!
//! Data flows one way: bytes -> [`container`] -> model ([`v3`] / [`v2`]) -> session -> JS surface.
//! The core is `no_std` + `alloc`; the `std`, `cli` and `web` features add host conveniences.
#![cfg_attr(not(any(feature = "std", test)), no_std)]
#![forbid(unsafe_op_in_unsafe_fn)]

extern crate alloc;

pub mod error;
pub mod container;
pub mod kernels;
pub mod tokenizer;
pub mod json;
pub mod prompt;
pub mod context;
pub mod sampling;
pub mod response;
pub mod grounding;
pub(crate) mod sha256;
mod blocks;
pub mod v2;
pub mod v3;
pub mod constrained;
pub mod session;

pub use error::{Error, Result};

#[cfg(feature = "web")]
pub mod web;
