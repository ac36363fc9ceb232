//! needle-web: run Needle tool-calling transformers (`.cact` containers) on the client.
//!
//! Data flows one way: bytes -> [`container`] -> model ([`v3`] / [`v2`]) -> session -> JS surface.
//! The core is `no_std` + `alloc`; the `std`, `cli` and `web` features add host conveniences.
#![cfg_attr(not(any(feature = "std", test)), no_std)]
#![forbid(unsafe_op_in_unsafe_fn)]

extern crate alloc;

mod blocks;
pub mod constrained;
pub mod container;
pub mod context;
pub mod error;
pub(crate) mod float_digits;
pub(crate) mod float_parse;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod grounding;
pub mod json;
pub mod kernels;
pub mod prompt;
pub mod response;
pub mod sampling;
pub mod session;
pub(crate) mod sha256;
pub(crate) mod sort;
pub(crate) mod text_search;
pub mod tokenizer;
pub mod v2;
pub mod v3;

pub use error::{Error, Result};

#[cfg(feature = "web")]
pub mod web;
