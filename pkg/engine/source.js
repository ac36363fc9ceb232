// Where a model's bytes come from (a URL, through storage; a Blob; bytes lent or posted by the
// client), each held to the load's `integrity`: the first half of the engine host's load job.
import { Reply, NeedleError } from '../protocol.js';
import { fetchModel, integrityHex } from '../storage/model.js';
import { sha256Hex } from '../storage/sha256.js';

/** A logger whose lines go to the client's (protocol.js Reply.LOG) through `post`. */
export const logTo = (post) =>
  Object.fromEntries(
    ['error', 'warn', 'info', 'debug'].map((level) => [
      level,
      (message) => post({ type: Reply.LOG, level, message }),
    ]),
  );

/**
 * Turns a load source from the client into bytes: `{ bytes, sha256, from, storage }`. `lent` takes
 * bytes an inline client handed over by reference. Every source is held to `integrity`.
 */
export async function sourceBytes(source, options, post, signal, lent) {
  const onProgress = (p) => post({ type: Reply.PROGRESS, ...p });
  if (source.kind === 'url') {
    // Warnings (storage refused, a full quota) and resumes go to the client's logger.
    const log = logTo(post);
    return fetched(source.url, {
      integrity: options.integrity,
      cache: options.cache,
      fetch: options.fetch,
      maxBytes: options.maxBytes,
      onProgress,
      signal,
      log,
    });
  }
  if (source.kind === 'lent') source = { ...source, kind: 'bytes', bytes: lent(source.handle) };
  let src;
  // The client already fetched (and checked) it with its own `fetch` function or store.
  if (source.kind === 'bytes' && source.from)
    return {
      bytes: source.bytes,
      sha256: source.sha256 ?? null,
      from: source.from,
      storage: source.storage,
    };
  if (source.kind === 'bytes') src = { bytes: source.bytes, from: 'bytes' };
  else if (source.kind === 'blob') {
    const bytes = new Uint8Array(await source.blob.arrayBuffer());
    onProgress({ phase: 'read', loaded: bytes.length, total: bytes.length });
    src = { bytes, from: 'blob' };
  } else throw new NeedleError('bad_source', `unknown source kind ${source.kind}`);
  const want = integrityHex(options.integrity);
  const sha256 = want ? await sha256Hex(src.bytes) : null;
  if (want && sha256 !== want)
    throw new NeedleError(
      'integrity',
      `the ${src.from} source: expected sha256 ${want}, got sha256 ${sha256}`,
    );
  return { ...src, sha256 };
}

/** A URL's bytes; a transfer that fails mid-way (a cut body, a bad encoding) is `fetch_failed`. */
async function fetched(url, options) {
  try {
    return await fetchModel(url, options);
  } catch (e) {
    if (e instanceof NeedleError || (e && e.name === 'AbortError')) throw e;
    throw new NeedleError('fetch_failed', `cannot read ${url}: ${(e && e.message) || e}`);
  }
}
