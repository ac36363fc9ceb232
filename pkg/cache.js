// Model bytes: streamed download with progress, Cache Storage keyed by URL, and integrity.
//
// Each cached response records its byte length and SHA-256 in headers next to the body, so a
// partial or corrupted copy (an interrupted write, storage damage) is caught before use, evicted
// and fetched again instead of being handed to the engine.
import { NeedleError } from './protocol.js';

export const CACHE_NAME = 'needle-web-models-v1';
const H_LENGTH = 'x-needle-length';
const H_SHA256 = 'x-needle-sha256';
const H_TIME = 'x-needle-cached-at';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
// A variable specifier keeps bundlers from trying to include Node built-ins in a browser build.
const nodeImport = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

function storage() {
  return typeof caches !== 'undefined' && caches && typeof caches.open === 'function' ? caches : null;
}

/** Lowercase hex SHA-256 of the bytes, or null where WebCrypto is unavailable (insecure context). */
export async function sha256Hex(bytes) {
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (!subtle) return null;
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

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
    if (raw.length === 32) return Array.from(raw, (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
  }
  throw new NeedleError('invalid_argument', `integrity must be a SHA-256 (hex or sha256-<base64>), got "${integrity}"`);
}

/** Reads a response body to one Uint8Array, reporting progress as chunks arrive. */
async function readBody(response, phase, onProgress, signal) {
  const header = Number(response.headers.get('content-length'));
  let total = Number.isFinite(header) && header > 0 ? header : null;
  if (!response.body || typeof response.body.getReader !== 'function') {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onProgress({ phase, loaded: bytes.length, total: bytes.length });
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  onProgress({ phase, loaded: 0, total });
  for (;;) {
    if (signal && signal.aborted) {
      await reader.cancel().catch(() => {});
      throw new NeedleError('aborted', 'load aborted');
    }
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    // A compressed transfer reports the compressed length: never show more than 100%.
    if (total !== null && loaded > total) total = null;
    onProgress({ phase, loaded, total });
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  onProgress({ phase, loaded, total: loaded });
  return bytes;
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

/** The cached copy of `url` if it is complete and intact (and matches `want`), else null (evicted). */
async function readCached(cache, url, want, onProgress, signal) {
  const hit = await cache.match(url);
  if (!hit) return null;
  const length = Number(hit.headers.get(H_LENGTH));
  const recorded = hit.headers.get(H_SHA256);
  let bytes = null;
  try {
    bytes = await readBody(hit, 'cache', onProgress, signal);
  } catch (e) {
    if (e instanceof NeedleError && e.code === 'aborted') throw e;
    bytes = null; // an unreadable body is as good as missing
  }
  let ok = bytes !== null && bytes.length === length;
  let sha = null;
  if (ok && (recorded || want)) {
    sha = await sha256Hex(bytes);
    ok = sha !== null && (!recorded || sha === recorded) && (!want || sha === want);
  }
  if (ok) return { bytes, sha256: sha ?? recorded };
  await cache.delete(url);
  return null;
}

/**
 * The model at `url` as bytes: from Cache Storage when an intact copy is there, else downloaded
 * (and stored). Returns `{ bytes, sha256, from: 'cache' | 'network' | 'file' }`.
 * options: { integrity, cache = true, onProgress, signal, fetch }
 */
export async function fetchModel(url, options = {}) {
  const onProgress = options.onProgress || (() => {});
  const { signal } = options;
  const want = integrityHex(options.integrity);
  const href = String(url);

  if (href.startsWith('file:') && isNode) {
    const bytes = await readFileUrl(href, onProgress);
    const sha = want ? await sha256Hex(bytes) : null;
    if (want && sha !== want) throw integrityError(href, want, sha);
    return { bytes, sha256: sha, from: 'file' };
  }

  const store = options.cache === false ? null : storage();
  const cache = store ? await store.open(CACHE_NAME) : null;
  if (cache) {
    const hit = await readCached(cache, href, want, onProgress, signal);
    if (hit) return { ...hit, from: 'cache' };
  }

  const doFetch = options.fetch || globalThis.fetch;
  let response;
  try {
    response = await doFetch(href, { signal, credentials: 'same-origin' });
  } catch (e) {
    if (signal && signal.aborted) throw new NeedleError('aborted', 'load aborted');
    throw new NeedleError('fetch_failed', `cannot fetch ${href}: ${e.message}`);
  }
  if (!response.ok) {
    throw new NeedleError('fetch_failed', `GET ${href}: HTTP ${response.status} ${response.statusText}`.trim(), {
      status: response.status,
    });
  }
  const bytes = await readBody(response, 'download', onProgress, signal);
  const sha = await sha256Hex(bytes);
  if (want && sha !== want) throw integrityError(href, want, sha);
  if (cache) await put(cache, href, bytes, sha);
  return { bytes, sha256: sha, from: 'network' };
}

function integrityError(url, want, got) {
  const why = got === null ? 'SHA-256 is unavailable here (insecure context)' : `got sha256 ${got}`;
  return new NeedleError('integrity', `${url}: expected sha256 ${want}, ${why}`);
}

async function put(cache, url, bytes, sha) {
  const headers = {
    'content-type': 'application/octet-stream',
    'content-length': String(bytes.length),
    [H_LENGTH]: String(bytes.length),
    [H_TIME]: String(Date.now()),
  };
  if (sha) headers[H_SHA256] = sha;
  try {
    await cache.put(url, new Response(bytes, { headers }));
  } catch {
    // Quota exceeded or storage disabled: the model still runs, it just is not kept.
  }
}

/** Whether an entry for `url` is in the cache (its integrity is checked when it is loaded). */
export async function isCached(url) {
  const store = storage();
  if (!store) return false;
  const cache = await store.open(CACHE_NAME);
  return !!(await cache.match(String(url)));
}

/** Removes the cached copy of `url`; resolves to whether there was one. */
export async function evict(url) {
  const store = storage();
  if (!store) return false;
  const cache = await store.open(CACHE_NAME);
  return cache.delete(String(url));
}

/** The cached models and the origin's storage estimate. */
export async function cacheUsage() {
  const store = storage();
  const models = [];
  if (store) {
    const cache = await store.open(CACHE_NAME);
    for (const request of await cache.keys()) {
      const hit = await cache.match(request);
      if (!hit) continue;
      models.push({
        url: request.url,
        bytes: Number(hit.headers.get(H_LENGTH)) || 0,
        sha256: hit.headers.get(H_SHA256),
        cachedAt: Number(hit.headers.get(H_TIME)) || null,
      });
    }
  }
  let quota = null;
  let usage = null;
  const nav = globalThis.navigator;
  if (nav && nav.storage && typeof nav.storage.estimate === 'function') {
    const est = await nav.storage.estimate();
    quota = est.quota ?? null;
    usage = est.usage ?? null;
  }
  return { models, bytes: models.reduce((n, m) => n + m.bytes, 0), usage, quota };
}
