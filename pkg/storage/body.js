// Reading a Response body to one Uint8Array with progress (downloads and Cache Storage reads).
import { NeedleError } from '../protocol.js';

/** Joins chunks into one array (no copy when there is one). */
export function concat(chunks, length) {
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}

/**
 * Reads a response body to one Uint8Array, reporting `{phase, loaded, total}` as chunks arrive.
 * `start`: bytes already held from an earlier response (a resumed download counts on from there).
 * `sink(chunk)`: where chunks go; without it they are collected and returned.
 */
export async function readBody(
  response,
  phase,
  onProgress = () => {},
  signal = undefined,
  { start = 0, total: known, sink } = {},
) {
  const header = Number(response.headers.get('content-length'));
  let total =
    known !== undefined ? known : Number.isFinite(header) && header > 0 ? start + header : null;
  if (!response.body || typeof response.body.getReader !== 'function') {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (sink) sink(bytes);
    onProgress({ phase, loaded: start + bytes.length, total: total ?? start + bytes.length });
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = start;
  onProgress({ phase, loaded, total });
  try {
    for (;;) {
      if (signal && signal.aborted) throw new NeedleError('aborted', 'load aborted');
      const { done, value } = await reader.read();
      if (done) break;
      if (sink)
        sink(value); // it may refuse the body (download.js: past its ceiling)
      else chunks.push(value);
      loaded += value.length;
      // A compressed transfer reports the compressed length: never show more than 100%.
      if (total !== null && loaded > total) total = null;
      onProgress({ phase, loaded, total });
    }
  } catch (e) {
    await reader.cancel().catch(() => {}); // the rest of the body is never read
    throw e;
  }
  if (!sink && chunks.length !== 1) onProgress({ phase, loaded, total: loaded });
  return sink ? null : concat(chunks, loaded - start);
}
