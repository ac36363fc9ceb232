//! The session: where the model generations meet the text layer.
//!
//! [`Engine`] (engine.rs) runs one request at a time over the generation-agnostic model
//! and state (net.rs), its decode loop as named stages: a request's start (begin.rs), the
//! per-token stages (decode.rs), the request in flight between them (turn.rs); [`Request`],
//! [`Token`] and [`Completion`] (request.rs) are what crosses its edge; options.rs names a
//! request's options and load_options.rs a load's (the JS objects and the CLI flags read
//! them); value search (search.rs) is a decoding mode of the engine; unemittable.rs holds the
//! ids no decoding mode may pick; prefix.rs lets consecutive requests reuse what the state
//! holds, and snapshot.rs saves and loads its system + tools copy as bytes; [`Conversation`]
//! (conversation.rs) keeps the turns above the engine.
mod begin;
mod conversation;
mod decode;
mod engine;
mod load_options;
mod net;
mod options;
mod prefix;
mod request;
mod search;
mod snapshot;
mod turn;
mod unemittable;

pub use conversation::{Conversation, UNRESET_TURNS};
pub use engine::{Engine, ModelInfo};
pub use load_options::{Backend, GpuKernels, LoadOption, LoadOptions, LOAD_OPTIONS};
pub use options::{turns, Kind, RequestOption, OPTIONS};
pub use request::{Completion, Request, StopReason, Token};
pub use snapshot::{FORMAT_VERSION as SNAPSHOT_FORMAT_VERSION, HEADER as SNAPSHOT_HEADER_LEN};

pub use crate::v3::{HeadKind, KvPrecision, Numerics};
