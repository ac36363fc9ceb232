//! Prefix snapshots on the JS class (see `session/snapshot.rs`): what `needle snapshot` writes
//! natively, made or loaded in the browser, with the same bits.
use alloc::string::String;
use alloc::vec::Vec;

use wasm_bindgen::prelude::*;

use super::js::error;
use super::session::{count, Session};
use crate::session::Request;
use crate::Error;

#[wasm_bindgen]
impl Session {
    /// `save_snapshot` in steps, so a worker can look for an abort between them: resets the
    /// session and returns the prefix ids; `snapshot_step(ids, chunk)` runs at most `chunk`
    /// more of them (true once all have), `seal_snapshot(ids)` returns the snapshot. The
    /// same bytes as `save_snapshot`.
    pub fn begin_snapshot(
        &mut self,
        tools_json: &str,
        system: Option<String>,
        date: Option<String>,
    ) -> Result<Vec<u32>, JsValue> {
        self.engine.begin_snapshot(&prefix_request(tools_json, &system, &date)).map_err(error)
    }

    /// See `begin_snapshot`.
    pub fn snapshot_step(&mut self, ids: &[u32], chunk: f64) -> Result<bool, JsValue> {
        self.engine.snapshot_step(ids, count("chunk", chunk).map_err(error)?).map_err(error)
    }

    /// See `begin_snapshot`.
    pub fn seal_snapshot(&mut self, ids: &[u32]) -> Result<Vec<u8>, JsValue> {
        self.engine.seal_snapshot(ids).map_err(error)
    }

    /// What a snapshot of `tools_json` and `system` (and `date`) would be made from, without
    /// prefilling it: its header's bytes 8..12 and 44..136 (format version, model, options,
    /// prefix ids' hash and count). Hosts key stored snapshots by it (`pkg/snapshots.js`).
    pub fn snapshot_key(
        &mut self,
        tools_json: &str,
        system: Option<String>,
        date: Option<String>,
    ) -> Result<Vec<u8>, JsValue> {
        self.engine.snapshot_key(&prefix_request(tools_json, &system, &date)).map_err(error)
    }

    /// Gives the container's SHA-256 (32 bytes) a host already took while loading it, so
    /// snapshots and their keys do not hash the model again.
    pub fn set_model_sha256(&mut self, digest: &[u8]) -> Result<(), JsValue> {
        let digest = digest.try_into().map_err(|_| {
            error(Error::InvalidArgument { name: "model_sha256", reason: "must be 32 bytes" })
        })?;
        self.engine.set_model_sha256(digest);
        Ok(())
    }

    /// Loads a snapshot as the prefix the next request with that system prompt and tools
    /// reuses; returns its prefix tokens. `model_sha256`: the container's 32-byte SHA-256
    /// when the host has it (else the core hashes the model once). A corrupt or truncated
    /// snapshot is `bad_snapshot`, one from another model, format version or option
    /// `snapshot_mismatch`, a Needle 2 model `unsupported`; the session is then reset.
    pub fn load_snapshot(
        &mut self,
        bytes: &[u8],
        model_sha256: Option<Vec<u8>>,
    ) -> Result<u32, JsValue> {
        if let Some(digest) = model_sha256 {
            let digest = digest.try_into().map_err(|_| {
                error(Error::InvalidArgument { name: "model_sha256", reason: "must be 32 bytes" })
            })?;
            self.engine.set_model_sha256(digest);
        }
        self.engine.load_snapshot(bytes).map(|n| n as u32).map_err(error)
    }
}

/// The request whose system + tools prefix a snapshot holds (no query).
pub(super) fn prefix_request<'r>(
    tools_json: &'r str,
    system: &'r Option<String>,
    date: &'r Option<String>,
) -> Request<'r> {
    let mut req = Request::new("", tools_json);
    req.system = system.as_deref();
    req.date = date.as_deref();
    req
}
