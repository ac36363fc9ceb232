// Prefixes made ready ahead of a request, on the client's side (index.js): `needle.prepare`, and
// the step before every `complete()`. Asks the engine for the system + tools prefix's key, finds
// a snapshot of it (given ahead of time: `snapshots` / `loadSnapshot`; or stored by an earlier
// page: storage/snapshots.js), has the engine load that or prefill the prefix
// (engine/prefix.js), and stores what was prefilled. Only `{ tools, system, date }` ever reaches
// it: a query or a conversation's turns are never part of a snapshot.
import { Req } from './protocol.js';
import { fetchModel } from './storage/model.js';
import { SnapshotStore, keyOfSnapshot } from './storage/snapshots.js';

export class Prefixes {
  #call; // (type, payload, options) -> the engine's reply (index.js #call)
  #store; // Promise<SnapshotStore> | null (snapshots: false)
  #given = new Map(); // key -> bytes given ahead of time
  #saved = new Set(); // keys this page stored
  #log;

  /** options: Needle.load's `snapshots`, `snapshotBudget`, `cache`; `log`. */
  constructor(call, { snapshots, snapshotBudget, cache }, log) {
    this.#call = call;
    this.#log = log;
    this.#store = snapshots === false ? null : SnapshotStore.open(cache, snapshotBudget, log);
    if (this.#store) this.#store.catch(() => {});
  }

  /** Whether snapshots are used at all (`snapshots: false` turns them off). */
  get enabled() {
    return this.#store !== null;
  }

  /**
   * Keeps a snapshot given ahead of time (an absolute URL or bytes) for its prefix: `{ key, bytes }`
   * (`key` null: not a snapshot, so kept for nothing).
   */
  async give(source, { signal } = {}) {
    const bytes = await snapshotBytes(source, signal, this.#log);
    const key = await keyOfSnapshot(bytes);
    if (key !== null) this.#given.set(key, bytes);
    return { key, bytes };
  }

  /**
   * Loads a snapshot given now (`loadSnapshot`: an absolute URL or bytes) as the engine's prefix:
   * `{ tokens }`. It is kept for its prefix only once the engine took it, so one the engine
   * refuses leaves the snapshot given before for that prefix in place (issue 51).
   */
  async load(source, { signal } = {}) {
    const bytes = await snapshotBytes(source, signal, this.#log);
    const { key, tokens } = await this.#call(Req.SNAPSHOT, { bytes }, { signal });
    this.#given.set(key, bytes);
    return { tokens };
  }

  /**
   * Brings `prefix` (`{ tools, system, date }`, and a request's `engine` options) into the
   * engine. `explicit`: a `prepare()` (it prefills even where nothing
   * would be kept); a request's step only loads a snapshot or makes one to keep, and otherwise
   * leaves the prefill to the request (which aborts sooner mid-way). Resolves to
   * `{ key, snapshot: 'held' | 'loaded' | 'saved' | 'prefilled' | null, tokens }`.
   */
  async ensure(prefix, { signal, explicit = false }) {
    const store = this.#store && (await this.#store);
    // A prefix with a date fact changes by the minute: stored, it would only push others out.
    const keep = !!store && store.persistent && !prefix.date;
    // Nothing to load and nothing to keep: the request prefills (and caches) its prefix itself.
    if (!explicit && !keep && this.#given.size === 0)
      return { key: null, snapshot: null, tokens: 0 };
    const { key, held } = await this.#call(Req.PREFIX, prefix, { signal });
    if (key === null) return { key, snapshot: null, tokens: 0 };
    if (held) return { key, snapshot: 'held', tokens: null };
    const snapshot = this.#given.get(key) ?? (store ? await store.get(key) : undefined);
    if (!snapshot && !keep && !explicit) return { key, snapshot: null, tokens: 0 };
    const { tools, system, date } = prefix;
    const r = await this.#call(
      Req.PREPARE,
      { tools, system, date, key, snapshot, keep },
      { signal },
    );
    if (r.bytes && (await store.put(key, r.bytes))) {
      this.#saved.add(key);
      return { key, snapshot: 'saved', tokens: r.tokens };
    }
    // A stored one just used: stored again, as the most recently used (not waited for).
    if (r.snapshot === 'loaded' && store && !this.#given.has(key))
      store.put(key, snapshot).catch(() => {});
    return { key, snapshot: r.snapshot, tokens: r.tokens };
  }

  /** A request's `snapshot` field from how the engine came to hold its prefix. */
  resultField(from, key) {
    if (from === 'loaded') return 'loaded';
    return from === 'prefilled' && this.#saved.has(key) ? 'saved' : null;
  }
}

/** A snapshot given as bytes (Uint8Array, ArrayBuffer, a view) as a Uint8Array, not copied; else null. */
export function givenBytes(source) {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source))
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  return null;
}

/** The bytes of a snapshot source: bytes as they are, an absolute URL fetched (no storage). */
async function snapshotBytes(source, signal, log) {
  return (
    givenBytes(source) ?? (await fetchModel(String(source), { cache: 'none', signal, log })).bytes
  );
}
