// The model at a URL as bytes: from storage when an intact copy is there, else downloaded (and
// stored). Every copy is checked: a stored entry against its recorded length and SHA-256 (a
// partial or corrupted copy is evicted and fetched again), any copy against `integrity`.
import { NeedleError } from '../protocol.js';
import { download } from './download.js';
import { sha256Hex } from './sha256.js';
import { openStore, readEntry, writeEntry } from './index.js';
import { silentLog } from '../log.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
// A variable specifier keeps bundlers from trying to include Node built-ins in a browser build.
const nodeImport = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/**
 * Normalises an integrity option to lowercase hex. Accepts hex, `sha256-<base64>` (the Subresource
 * Integrity form) and `sha256:<hex>`.
 */
export function integrityHex(integrity) {
  if (integrity === undefined || integrity === null || integrity === '') return null;
  let s = String(integrity).trim();
  if (s.startsWith('sha256:')) s = s.slice(7);
  if (/^[0-9a-fA-F]{64}$/.test(s)) return s.toLowerCase();
  if (/^sha256-[A-Za-z0-9+/]{43}=$/.test(s)) {
    const raw = atob(s.slice(7));
    if (raw.length === 32)
      return Array.from(raw, (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
  }
  throw new NeedleError(
    'invalid_argument',
    `integrity must be a SHA-256 (hex or sha256-<base64>), got "${integrity}"`,
  );
}

async function readFileUrl(url, onProgress) {
  const { readFile } = await nodeImport('node:fs/promises');
  const { fileURLToPath } = await nodeImport('node:url');
  let buf;
  try {
    buf = await readFile(fileURLToPath(url));
  } catch (e) {
    throw new NeedleError('fetch_failed', `cannot read ${url}: ${e.message}`);
  }
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  onProgress({ phase: 'read', loaded: bytes.length, total: bytes.length });
  return bytes;
}

/** The stored copy of `url` if it is complete and intact (and matches `want`), else null (evicted). */
async function readStored(store, url, want, onProgress, signal, log) {
  const entry = await readEntry(store, url, { onProgress, signal }, log);
  if (!entry) return null;
  const bytes = entry.bytes instanceof Uint8Array ? entry.bytes : null;
  const length = entry.length ?? (bytes && bytes.length);
  let ok = bytes !== null && bytes.length === length;
  let sha = entry.sha256 || null;
  if (ok && (sha || want)) {
    const actual = await sha256Hex(bytes);
    ok = (!sha || actual === sha) && (!want || actual === want);
    sha = actual;
  }
  if (ok) return { bytes, sha256: sha };
  log.info(`needle-web: the stored copy of ${url} is damaged or outdated; fetching it again`);
  await store.delete(url).catch(() => {});
  return null;
}

function integrityError(url, want, got) {
  return new NeedleError('integrity', `${url}: expected sha256 ${want}, got sha256 ${got}`);
}

// The codes with which the engine refuses a model's bytes (src/error.rs): not a model, or a
// damaged one. A stored copy it refuses is evicted, so the next load fetches it again.
const REFUSED_BYTES = new Set([
  'bad_tag',
  'truncated',
  'bad_header',
  'bad_tensor',
  'bad_tokenizer',
]);

/**
 * After a load of `url` failed with `error`: when the engine refused the bytes themselves, the
 * stored copy (a 200 answer that was not the model, a body cut short) is deleted from the `cache`
 * option's storage. Resolves to whether one was.
 */
export async function evictRefused(url, cache, error, log = silentLog) {
  if (!REFUSED_BYTES.has(error?.code)) return false;
  const store = await openStore(cache, log).catch(() => null);
  const gone = store ? await store.delete(String(url)).catch(() => false) : false;
  if (gone)
    log.warn(
      `needle-web: the stored copy of ${url} is not a model the engine reads (${error.code}); evicted`,
    );
  return gone;
}

/**
 * Returns `{ bytes, sha256, from: 'cache' | 'network' | 'file', storage }`.
 * options: { integrity, cache = 'auto', onProgress, signal, fetch, log, retries, backoffMs,
 * maxBytes }
 */
export async function fetchModel(url, options = {}) {
  const onProgress = options.onProgress || (() => {});
  const { signal } = options;
  const log = options.log || silentLog;
  const want = integrityHex(options.integrity);
  const href = String(url);

  if (href.startsWith('file:') && isNode) {
    const bytes = await readFileUrl(href, onProgress);
    const sha = want ? await sha256Hex(bytes) : null;
    if (want && sha !== want) throw integrityError(href, want, sha);
    return { bytes, sha256: sha, from: 'file', storage: 'none' };
  }

  const store = await openStore(options.cache, log);
  const hit = await readStored(store, href, want, onProgress, signal, log);
  if (hit) return { ...hit, from: 'cache', storage: store.kind };

  const bytes = await download(href, { ...options, log });
  const sha = await sha256Hex(bytes);
  if (want && sha !== want) throw integrityError(href, want, sha);
  if (store.kind !== 'none')
    await writeEntry(store, href, { bytes, sha256: sha, cachedAt: Date.now() }, log);
  return { bytes, sha256: sha, from: 'network', storage: store.kind };
}
