// Prefix snapshots in the package's storage chain (index.js: Cache Storage -> IndexedDB -> none, or
// the caller's store), beside the models: one entry per snapshot under a URL made from its key,
// within a byte budget, the least recently used dropped first.
//
// A key is the SHA-256 of what a snapshot's header names (the core's `session/snapshot.rs`:
// format version, then model SHA-256, generation, KV precision, numerics, layers run, capacity,
// the prefix ids' SHA-256 and count), so a snapshot of another model, format, option or prefix is
// never found under it. The engine still checks every byte (its checksum) when it loads one.
import { openStore, readEntry, writeEntry } from './index.js';
import { sha256Hex } from './sha256.js';
import { silentLog } from '../log.js';

/** Where snapshots are stored: a URL per key, under a name no page can serve. */
export const SNAPSHOT_URL = 'https://snapshots.needle-web.invalid/v1/';

/** The default `snapshotBudget`: the bytes all stored snapshots may take together. */
export const DEFAULT_SNAPSHOT_BUDGET = 256 * 1024 * 1024;

const MAGIC = [0x4e, 0x44, 0x4c, 0x53, 0x4e, 0x41, 0x50, 0]; // "NDLSNAP\0"
const HEADER = 136;

/** Whether a stored URL is a snapshot's (not a model's). */
export const isSnapshotUrl = (url) => String(url).startsWith(SNAPSHOT_URL);

/** The key of what a header names (the core's `snapshot_key`: bytes 8..12 and 44..136). */
export const keyOfNaming = (naming) => sha256Hex(naming);

/** The key snapshot `bytes` belong under, from their header; null when they are not a snapshot. */
export async function keyOfSnapshot(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER) return null;
  if (MAGIC.some((b, i) => bytes[i] !== b)) return null;
  const naming = new Uint8Array(4 + HEADER - 44);
  naming.set(bytes.subarray(8, 12));
  naming.set(bytes.subarray(44, HEADER), 4);
  return keyOfNaming(naming);
}

/** The snapshots in storage, opened from a `cache` option; `budget`: bytes they may take. */
export class SnapshotStore {
  #store;
  #budget;
  #log;

  constructor(store, budget = DEFAULT_SNAPSHOT_BUDGET, log = silentLog) {
    this.#store = store;
    this.#budget = budget;
    this.#log = log;
  }

  static async open(cache, budget, log) {
    return new SnapshotStore(await openStore(cache, log), budget, log);
  }

  /** Whether anything is kept across loads (storage 'none' keeps nothing). */
  get persistent() {
    return this.#store.kind !== 'none';
  }

  /** The stored snapshot of `key`, or undefined. */
  async get(key) {
    const entry = await readEntry(this.#store, SNAPSHOT_URL + key, {}, this.#log);
    return entry && entry.bytes instanceof Uint8Array ? entry.bytes : undefined;
  }

  /**
   * Stores `bytes` as `key`'s snapshot (also to mark it used), then drops the least recently used
   * others until all fit the budget; resolves to whether it was stored.
   */
  async put(key, bytes) {
    if (bytes.length > this.#budget) {
      this.#log.info(
        `needle-web: a ${bytes.length}-byte prefix snapshot exceeds snapshotBudget; not stored`,
      );
      return false;
    }
    const url = SNAPSHOT_URL + key;
    const entry = { bytes, sha256: null, cachedAt: Date.now() };
    if (!(await writeEntry(this.#store, url, entry, this.#log))) return false;
    const others = (await listSnapshots(this.#store)).filter((s) => s.url !== url);
    let total = bytes.length + others.reduce((n, s) => n + s.bytes, 0);
    others.sort((a, b) => (a.cachedAt ?? 0) - (b.cachedAt ?? 0));
    for (const old of others) {
      if (total <= this.#budget) break;
      await this.#store.delete(old.url).catch(() => {});
      total -= old.bytes;
    }
    return true;
  }
}

/** The snapshots `store` holds: `[{ url, key, bytes, cachedAt }]`. */
export async function listSnapshots(store) {
  const out = [];
  for (const url of await store.keys()) {
    if (!isSnapshotUrl(url)) continue;
    const entry = store.describe ? await store.describe(url) : await store.get(url);
    if (!entry) continue;
    const bytes =
      typeof entry.bytes === 'number' ? entry.bytes : entry.bytes ? entry.bytes.length : 0;
    out.push({ url, key: url.slice(SNAPSHOT_URL.length), bytes, cachedAt: entry.cachedAt ?? null });
  }
  return out;
}
