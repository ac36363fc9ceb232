// Model storage that degrades instead of failing (prefix snapshots live beside the models:
// snapshots.js). One small interface,
//   { kind, get(url) -> entry | undefined, put(url, entry), delete(url) -> boolean, keys() -> urls }
//   entry: { bytes: Uint8Array, sha256: string | null, cachedAt: number }
// with backends tried in order (Cache Storage, IndexedDB, none) by what works at run time, or one
// chosen by the `cache` option ('auto' | 'cache-api' | 'indexeddb' | 'none' | an object with those
// four methods). A backend that fails (a security error, a full quota) is a warning through the
// logger; the load goes on uncached.
import { NeedleError } from '../protocol.js';
import { openCacheApi } from './cache-api.js';
import { openIndexedDb } from './indexeddb.js';
import { silentLog as quiet } from '../log.js';
import { isSnapshotUrl, listSnapshots } from './snapshots.js';

export { CACHE_NAME } from './cache-api.js';

const BACKENDS = { 'cache-api': openCacheApi, indexeddb: openIndexedDb };
const AUTO = ['cache-api', 'indexeddb'];

/** Keeps nothing: every load downloads (the model lives in memory only). */
const NONE = Object.freeze({
  kind: 'none',
  get: async () => undefined,
  put: async () => {},
  delete: async () => false,
  keys: async () => [],
});

/** Whether `cache` is a caller's own store rather than a backend name. */
export function isCustomStore(cache) {
  return (
    !!cache &&
    typeof cache === 'object' &&
    ['get', 'put', 'delete', 'keys'].every((m) => typeof cache[m] === 'function')
  );
}

/** The storage a `cache` option names (true/undefined: 'auto'; false: 'none'). */
export async function openStore(cache = 'auto', log = quiet) {
  if (cache === false || cache === 'none') return NONE;
  if (isCustomStore(cache)) return { kind: 'custom', ...bind(cache) };
  const names =
    cache === true || cache === 'auto' || cache === undefined || cache === null ? AUTO : [cache];
  for (const name of names) {
    if (!BACKENDS[name]) {
      throw new NeedleError(
        'invalid_argument',
        `cache must be 'auto', 'cache-api', 'indexeddb', 'none' or {get, put, delete, keys}; got ${String(name)}`,
      );
    }
  }
  // An API that does not exist here (Node, some runtimes) is expected and only a debug line; one
  // that exists and refuses (a security error) is a warning.
  let refused = false;
  for (const name of names) {
    try {
      return await BACKENDS[name]();
    } catch (e) {
      refused ||= !e.absent;
      log[e.absent ? 'debug' : 'warn'](
        `needle-web: ${name} storage is unavailable (${describe(e)})`,
      );
    }
  }
  log[refused ? 'warn' : 'debug'](
    'needle-web: no model storage works here; models are downloaded on each load',
  );
  return NONE;
}

function bind(store) {
  return {
    get: (url, o) => store.get(url, o),
    put: (url, entry) => store.put(url, entry),
    delete: (url) => store.delete(url),
    keys: () => store.keys(),
    describe: store.describe ? (url) => store.describe(url) : undefined,
  };
}

const describe = (e) => `${(e && e.name) || 'Error'}: ${(e && e.message) || e}`;

/** `store.get` where a failing read is a warning and a miss. */
export async function readEntry(store, url, options, log = quiet) {
  try {
    return await store.get(url, options);
  } catch (e) {
    if (e instanceof NeedleError && e.code === 'aborted') throw e;
    log.warn(
      `needle-web: reading ${url} from ${store.kind} storage failed (${describe(e)}); downloading it`,
    );
    return undefined;
  }
}

/** `store.put` where a failure (a full quota, storage turned off) is a warning, not an error. */
export async function writeEntry(store, url, entry, log = quiet) {
  try {
    await store.put(url, entry);
    return true;
  } catch (e) {
    const why =
      e && e.name === 'QuotaExceededError' ? "the origin's storage quota is full" : describe(e);
    log.warn(
      `needle-web: ${url} was not cached in ${store.kind} storage (${why}); it runs from memory`,
    );
    await store.delete(url).catch(() => {});
    return false;
  }
}

/** Whether `url` has an entry (its integrity is checked when it is loaded). */
export async function isCached(url, cache) {
  const store = await openStore(cache);
  return (await store.keys()).includes(String(url));
}

/** Removes the stored copy of `url`; resolves to whether there was one. */
export async function evict(url, cache) {
  const store = await openStore(cache);
  return store.delete(String(url));
}

/** The backend in use, its models and prefix snapshots, and the origin's storage estimate. */
export async function cacheUsage(cache) {
  const store = await openStore(cache);
  const models = [];
  for (const url of await store.keys()) {
    if (isSnapshotUrl(url)) continue;
    const entry = store.describe ? await store.describe(url) : await store.get(url);
    if (!entry) continue;
    const bytes =
      typeof entry.bytes === 'number' ? entry.bytes : entry.bytes ? entry.bytes.length : 0;
    models.push({ url, bytes, sha256: entry.sha256 ?? null, cachedAt: entry.cachedAt ?? null });
  }
  const snapshots = await listSnapshots(store);
  let quota = null;
  let usage = null;
  const nav = globalThis.navigator;
  if (nav && nav.storage && typeof nav.storage.estimate === 'function') {
    const est = await nav.storage.estimate().catch(() => ({}));
    quota = est.quota ?? null;
    usage = est.usage ?? null;
  }
  return {
    backend: store.kind,
    models,
    snapshots,
    bytes: [...models, ...snapshots].reduce((n, m) => n + m.bytes, 0),
    usage,
    quota,
  };
}
