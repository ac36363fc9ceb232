//! Prefix snapshots: the state after a request's system prompt and tool list, as bytes that
//! another engine of the same model and options loads instead of prefilling that prefix.
//!
//! Only the system prompt and tools are ever saved, up to where the prefix cache keeps its copy
//! (see [`super::prefix`]) for a query whose first text joins the head's last token; no query
//! or turn text reaches the bytes. A snapshot loads into the prefix cache as its saved copy, so the next
//! request with that head runs only its own ids and gives a fresh prefill's bits.
//!
//! Layout (little-endian):
//! ```text
//! 0    8   magic "NDLSNAP\0"
//! 8    4   format version
//! 12   32  SHA-256 of every byte from 44 on
//! 44   32  SHA-256 of the model's container bytes
//! 76   4   generation, KV precision (0 f32, 1 int8), numerics (0 exact, 1 deploy), 0
//! 80   8   depth (layers run)          88  8  capacity (tokens)
//! 96   32  SHA-256 of the prefix ids   128 8  number of ids
//! 136  4n  the ids                     ...    the state ([`crate::blocks::persist`])
//! ```
//! The state's own bytes begin with its layer plan (layer, window, ring slots per block).
use alloc::vec::Vec;

use super::engine::{parse_tools, Engine, ModelInfo};
use super::request::Request;
use super::{KvPrecision, Numerics};
use crate::sha256::sha256;
use crate::{context, grounding, prompt, Error, Result};

const MAGIC: &[u8; 8] = b"NDLSNAP\0";
/// Bumped whenever the layout or the state's byte form changes.
pub const FORMAT_VERSION: u32 = 1;
/// The header's length: what [`Engine::snapshot_len`] needs of a snapshot.
pub const HEADER: usize = 136;

fn bad(reason: &'static str) -> Error {
    Error::BadSnapshot { reason }
}

fn mismatch(field: &'static str) -> Error {
    Error::SnapshotMismatch { field }
}

/// What a snapshot must have been made with to load into an engine: bytes 76..96.
fn options(info: &ModelInfo) -> [u8; 20] {
    let mut o = [0u8; 20];
    o[0] = info.generation;
    o[1] = (info.kv == KvPrecision::Int8) as u8;
    o[2] = (info.numerics == Numerics::Deploy) as u8;
    o[4..12].copy_from_slice(&(info.depth as u64).to_le_bytes());
    o[12..20].copy_from_slice(&(info.capacity as u64).to_le_bytes());
    o
}

fn ids_bytes(ids: &[u32]) -> Vec<u8> {
    ids.iter().flat_map(|i| i.to_le_bytes()).collect()
}

impl Engine<'_> {
    /// Gives the SHA-256 of the container bytes a host has already taken (`pkg/storage` keys
    /// models by it), so a snapshot does not hash the model again. A wrong digest only makes
    /// snapshots of this model refused, or another model's of the same shape accepted.
    pub fn set_model_sha256(&mut self, digest: [u8; 32]) {
        self.model_sha256 = Some(digest);
    }

    /// The SHA-256 of the model's container bytes (taken once per engine).
    fn model_sha256(&mut self) -> [u8; 32] {
        *self.model_sha256.get_or_insert_with(|| sha256(self.model))
    }

    /// The ids of `req`'s system prompt and tool list that a snapshot holds: where the prefix
    /// cache keeps its copy after the tools. The query and turns are not rendered in.
    pub fn snapshot_ids(&self, req: &Request) -> Result<Vec<u32>> {
        self.net.snapshots()?;
        let tools = parse_tools(req.tools_json)?;
        let dated =
            req.date.map(|d| grounding::with_date_fact(req.system.unwrap_or(""), d)).transpose()?;
        let system = dated.as_deref().or(req.system);
        let rendered = prompt::render_conversation(&[], "", tools.as_ref(), system)?;
        let tok = self.tokenizer();
        let mut ids =
            context::encode_prefix(tok, &rendered, req.allow_control_tokens, rendered.head);
        // The prefix cache keeps its copy one token short of the ids a request shares with
        // the head (`Engine::start`), and a query's first text may join the head's last
        // token: two short ends at or before every query's copy, so a request after a loaded
        // snapshot keeps its own copy there for the next one.
        ids.truncate(ids.len().saturating_sub(2));
        if ids.len() < 2 || ids.len() >= self.info.capacity {
            return Err(Error::InvalidArgument {
                name: "snapshot",
                reason: "no system prompt or tools to save, or too long",
            });
        }
        Ok(ids)
    }

    /// Prefills `req`'s system prompt and tool list (see [`Engine::snapshot_ids`]) from a
    /// fresh state and returns the snapshot of it; the engine keeps it as its prefix copy.
    pub fn save_snapshot(&mut self, req: &Request) -> Result<Vec<u8>> {
        let ids = self.begin_snapshot(req)?;
        while !self.snapshot_step(&ids, usize::MAX)? {}
        self.seal_snapshot(&ids)
    }

    /// [`Engine::save_snapshot`] in steps, so a host that must stay responsive can look for
    /// an abort between them: resets the engine and returns the prefix ids, which
    /// [`Engine::snapshot_step`] then runs and [`Engine::seal_snapshot`] writes. Running them
    /// in pieces gives the same bits as at once (Needle 3 pools each row apart).
    pub fn begin_snapshot(&mut self, req: &Request) -> Result<Vec<u32>> {
        let ids = self.snapshot_ids(req)?;
        self.reset();
        Ok(ids)
    }

    /// Runs at most `chunk` more of `ids` (from [`Engine::begin_snapshot`]); true once all
    /// of them have run. A failure resets the engine.
    pub fn snapshot_step(&mut self, ids: &[u32], chunk: usize) -> Result<bool> {
        let at = self.position();
        if at > ids.len() {
            return Err(Error::InvalidArgument { name: "snapshot", reason: "not this prefix" });
        }
        let end = ids.len().min(at.saturating_add(chunk.max(1)));
        if let Err(e) = self.feed(&ids[at..end]) {
            self.reset();
            return Err(e);
        }
        Ok(end == ids.len())
    }

    /// The snapshot once every id of `ids` has run; the engine keeps it as its prefix copy.
    pub fn seal_snapshot(&mut self, ids: &[u32]) -> Result<Vec<u8>> {
        if self.position() != ids.len() {
            return Err(Error::InvalidArgument { name: "snapshot", reason: "prefix not run" });
        }
        let state = self.net.save_state()?;
        self.prefix.seed(ids, self.net.mark());
        let mut out = Vec::with_capacity(HEADER + 4 * ids.len() + state.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&[0; 32]);
        out.extend_from_slice(&self.naming(ids));
        out.extend_from_slice(&ids_bytes(ids));
        out.extend_from_slice(&state);
        let sum = sha256(&out[44..]);
        out[12..44].copy_from_slice(&sum);
        Ok(out)
    }

    /// What a snapshot of `req`'s prefix would be made from, without prefilling it: its
    /// header's format version (bytes 8..12) and naming (44..136: model, options, ids' hash
    /// and count). Hosts key stored snapshots by it, so any change there misses.
    pub fn snapshot_key(&mut self, req: &Request) -> Result<Vec<u8>> {
        let ids = self.snapshot_ids(req)?;
        let mut key = FORMAT_VERSION.to_le_bytes().to_vec();
        key.extend_from_slice(&self.naming(&ids));
        Ok(key)
    }

    /// Header bytes 44..136: model SHA-256, options, the ids' SHA-256 and count.
    fn naming(&mut self, ids: &[u32]) -> Vec<u8> {
        let mut out = self.model_sha256().to_vec();
        out.extend_from_slice(&options(&self.info));
        out.extend_from_slice(&sha256(&ids_bytes(ids)));
        out.extend_from_slice(&(ids.len() as u64).to_le_bytes());
        out
    }

    /// Loads a snapshot made by [`Engine::save_snapshot`] (natively or in wasm: the kernels
    /// give the same bits) as the prefix cache's copy; returns how many prefix ids it holds.
    /// A snapshot that is corrupt, truncated, or made from another model, format version or
    /// option is refused (`BadSnapshot`, `SnapshotMismatch`) and the engine is reset.
    pub fn load_snapshot(&mut self, bytes: &[u8]) -> Result<usize> {
        self.reset();
        let ids = self.check_snapshot(bytes)?;
        let n = ids.len() / 4;
        self.net.load_state(&bytes[HEADER + ids.len()..])?;
        if self.net.position() != n {
            self.net.reset();
            return Err(bad("the state's position is not its prefix length"));
        }
        let ids: Vec<u32> = ids
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        self.prefix.seed(&ids, self.net.mark());
        Ok(n)
    }

    /// The length in bytes of the snapshot that begins with `header` (its first [`HEADER`]
    /// bytes, or all of a shorter file) if this engine can load it: a host reading a file
    /// refuses a snapshot of another model or option, or a file that is not one, from its
    /// header, and reads no more than this of it. The checksum is checked when it loads.
    pub fn snapshot_len(&mut self, header: &[u8]) -> Result<usize> {
        self.check_framing(header)?;
        let n = self.check_naming(header)?;
        self.expected_len(n)
    }

    /// `HEADER` + the ids + the state, for a prefix of `n` ids (`n` below the capacity).
    fn expected_len(&self, n: usize) -> Result<usize> {
        Ok(HEADER + 4 * n + self.net.state_len(n)?)
    }

    /// Checks everything but the state bytes; returns the ids' bytes.
    fn check_snapshot<'b>(&mut self, bytes: &'b [u8]) -> Result<&'b [u8]> {
        self.check_framing(bytes)?;
        if sha256(&bytes[44..]) != bytes[12..44] {
            return Err(bad("checksum does not match (corrupt or truncated)"));
        }
        let n = self.check_naming(bytes)?;
        if bytes.len() != self.expected_len(n)? {
            return Err(bad("length is not the state's"));
        }
        let ids = &bytes[HEADER..HEADER + 4 * n];
        if sha256(ids) != bytes[96..128] {
            return Err(bad("prefix ids do not match their hash"));
        }
        Ok(ids)
    }

    /// The net's support, magic, format version and a whole header.
    fn check_framing(&self, bytes: &[u8]) -> Result<()> {
        self.net.snapshots()?;
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(bad("not a prefix snapshot"));
        }
        if bytes[8..12] != FORMAT_VERSION.to_le_bytes() {
            return Err(mismatch("format version"));
        }
        if bytes.len() < HEADER {
            return Err(bad("header ends early"));
        }
        Ok(())
    }

    /// What the header names (model, options, prefix length) against this engine; returns the
    /// number of prefix ids.
    fn check_naming(&mut self, bytes: &[u8]) -> Result<usize> {
        if bytes[44..76] != self.model_sha256() {
            return Err(mismatch("model"));
        }
        let ours = options(&self.info);
        let theirs = &bytes[76..96];
        for (field, at) in [
            ("generation", 0..1),
            ("KV precision", 1..2),
            ("numerics", 2..4),
            ("depth", 4..12),
            ("capacity", 12..20),
        ] {
            if theirs[at.clone()] != ours[at] {
                return Err(mismatch(field));
            }
        }
        let n = u64::from_le_bytes(bytes[128..136].try_into().expect("8 bytes"));
        if n == 0 || n >= self.info.capacity as u64 {
            return Err(bad("prefix length out of range"));
        }
        Ok(n as usize)
    }
}
