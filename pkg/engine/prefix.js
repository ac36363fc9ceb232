// The prefix job of the engine host: a system + tools prefix brought into the engine ahead of a
// request (`needle.prepare`), from a snapshot or prefilled in chunks and sealed into one, and the
// keys stored snapshots are found by (storage/snapshots.js). Only the system prompt and tools
// reach here: the core's snapshot holds nothing of a query or a conversation's turns.
import { Reply, NeedleError } from '../protocol.js';
import { keyOfNaming, keyOfSnapshot } from '../storage/snapshots.js';
import { nextChunk, now, yieldNow } from './generate.js';

// Codes for a prefix that has nothing to keep (no system prompt or tools: invalid_argument) or a
// model whose snapshots the core refuses (Needle 2: unsupported).
const NOTHING_TO_KEEP = new Set(['invalid_argument', 'unsupported']);

const text = (v) => (v === undefined || v === null ? undefined : String(v));

/**
 * The stored-snapshot key of `{ tools, system, date }`'s prefix on session `s` (a hex SHA-256 of
 * what its header would name: format version, model, options, the prefix ids), or null when it
 * has none. Tools the core cannot read throw (as the request would).
 */
export async function prefixKey(s, { tools, system, date }) {
  let naming;
  try {
    naming = s.snapshot_key(tools, text(system), text(date));
  } catch (e) {
    if (NOTHING_TO_KEEP.has(e && e.code)) return null;
    throw e;
  }
  return keyOfNaming(naming);
}

/**
 * Brings `prefix` (`{ tools, system, date }`, its `key`) into session `s`: loads `snapshot` when
 * given (a bad one is a warning, then the prefill), else prefills it in chunks, looking for an
 * abort between them. Resolves to `{ snapshot: 'loaded' | 'prefilled', tokens, bytes? }`
 * (`bytes`: the snapshot of it, when `keep`).
 */
export async function bringIn(s, prefix, { snapshot, keep }, { post, aborted }) {
  if (snapshot) {
    try {
      const key = await keyOfSnapshot(snapshot);
      if (key === null) throw new NeedleError('bad_snapshot', 'not a prefix snapshot');
      if (key !== prefix.key)
        throw new NeedleError('snapshot_mismatch', 'it is the snapshot of another prefix');
      const tokens = s.load_snapshot(snapshot, undefined);
      return { snapshot: 'loaded', tokens };
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) throw e;
      post({
        type: Reply.LOG,
        level: 'warn',
        message: `needle-web: a stored prefix snapshot was not used (${e.code ?? 'error'}: ${e.message}); prefilling the prefix`,
      });
    }
  }
  const ids = s.begin_snapshot(prefix.tools, text(prefix.system), text(prefix.date));
  for (let chunk = 1, done = false; !done; ) {
    const t = now();
    done = s.snapshot_step(ids, chunk);
    chunk = nextChunk(chunk, now() - t);
    await yieldNow(); // lets an `abort` for this request arrive
    if (aborted()) {
      s.reset();
      throw new NeedleError('aborted', 'prepare aborted');
    }
  }
  const bytes = s.seal_snapshot(ids);
  return { snapshot: 'prefilled', tokens: ids.length, bytes: keep ? bytes : undefined };
}

/** A snapshot given ahead of time, loaded as the engine's prefix: `{ key, tokens }`. */
export async function loadGiven(s, bytes) {
  const key = await keyOfSnapshot(bytes);
  if (key === null) throw new NeedleError('bad_snapshot', 'bad prefix snapshot: not one');
  return { key, tokens: s.load_snapshot(bytes, undefined) };
}
