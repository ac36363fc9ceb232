// The Cache Storage backend: one Response per model URL, its byte length, SHA-256 and time in
// headers beside the body (the format needle-web has always written, so existing caches stay valid).
import { readBody } from './body.js';

export const CACHE_NAME = 'needle-web-models-v1';
const H_LENGTH = 'x-needle-length';
const H_SHA256 = 'x-needle-sha256';
const H_TIME = 'x-needle-cached-at';

/** Opens the backend; rejects where Cache Storage is missing or refused (opaque origins, some webviews). */
export async function openCacheApi() {
  if (typeof caches === 'undefined' || !caches || typeof caches.open !== 'function') {
    throw Object.assign(new Error('Cache Storage is not available here'), { absent: true });
  }
  const cache = await caches.open(CACHE_NAME);
  return {
    kind: 'cache-api',
    async get(url, { onProgress, signal } = {}) {
      const hit = await cache.match(url);
      if (!hit) return undefined;
      const recorded = Number(hit.headers.get(H_LENGTH));
      const bytes = await readBody(hit, 'cache', onProgress, signal);
      return {
        bytes,
        length: Number.isFinite(recorded) ? recorded : null,
        sha256: hit.headers.get(H_SHA256),
        cachedAt: Number(hit.headers.get(H_TIME)) || null,
      };
    },
    async put(url, { bytes, sha256, cachedAt }) {
      const headers = {
        'content-type': 'application/octet-stream',
        'content-length': String(bytes.length),
        [H_LENGTH]: String(bytes.length),
        [H_TIME]: String(cachedAt),
      };
      if (sha256) headers[H_SHA256] = sha256;
      await cache.put(url, new Response(bytes, { headers }));
    },
    delete: (url) => cache.delete(url),
    async keys() {
      return (await cache.keys()).map((r) => r.url);
    },
    async describe(url) {
      const hit = await cache.match(url);
      if (!hit) return undefined;
      return {
        bytes: Number(hit.headers.get(H_LENGTH)) || 0,
        sha256: hit.headers.get(H_SHA256),
        cachedAt: Number(hit.headers.get(H_TIME)) || null,
      };
    },
  };
}
