// A model download that survives a cut connection: the bytes already received are kept and the
// rest is asked for with `Range: bytes=N-` (where the server advertised `Accept-Ranges: bytes`),
// guarded by `If-Range` with the first response's validator, so a file changed in between is
// fetched whole instead of spliced. Bounded retries with exponential backoff; progress counts on.
// A download never holds more than its ceiling (`maxBytes`, and the length the server announces),
// and a response that cannot be the model (an HTML page, a body longer than its Content-Length) is
// refused before anything stores it.
import { NeedleError } from '../protocol.js';
import { concat, readBody } from './body.js';

const RETRIES = 4;
const BACKOFF_MS = 200;

/** The default `maxBytes`: the most a model download may take (2 GiB). */
export const DEFAULT_MAX_BYTES = 2 ** 31;

/** The `maxBytes` option, checked (the default when absent). */
export function maxBytesOption(value) {
  if (value === undefined || value === null) return DEFAULT_MAX_BYTES;
  if (!(Number.isSafeInteger(value) && value > 0))
    throw new NeedleError(
      'invalid_argument',
      `maxBytes must be a whole number above 0, not ${value}`,
    );
  return value;
}

const tooLarge = (url, what, ceiling) =>
  new NeedleError(
    'too_large',
    `GET ${url}: ${what}, more than the ${ceiling} bytes allowed (maxBytes)`,
    {
      maxBytes: ceiling,
    },
  );

/** A buffer for a body of `length` bytes; one the engine's thread cannot allocate is refused. */
function held(url, length) {
  try {
    return new Uint8Array(length);
  } catch (e) {
    throw new NeedleError(
      'fetch_failed',
      `GET ${url}: ${length} bytes cannot be held (${e.message})`,
    );
  }
}

/** Refuses a response that is a web page, not a model (an error page answered with 200). */
function refusePage(url, response) {
  const type = response.headers.get('content-type') || '';
  if (/^\s*(text\/html|application\/xhtml\+xml)\b/i.test(type))
    throw new NeedleError(
      'fetch_failed',
      `GET ${url}: the server answered a web page (${type}), not a model`,
    );
}

const sleep = (ms, signal) =>
  new Promise((ok, fail) => {
    const t = setTimeout(ok, ms);
    if (signal)
      signal.addEventListener(
        'abort',
        () => (clearTimeout(t), fail(new NeedleError('aborted', 'load aborted'))),
        { once: true },
      );
  });

/** `If-Range` needs a strong validator: a strong ETag, else Last-Modified. */
function validatorOf(response) {
  const etag = response.headers.get('etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return response.headers.get('last-modified');
}

/** Where the server says a 206 body starts (`Content-Range: bytes 100-999/1000`), or null. */
function rangeStart(response) {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') || '');
  return m ? Number(m[1]) : null;
}

/**
 * The `fetch` option: a function (called like fetch) or `{ headers }` added to each request (a
 * model behind auth). Returns a fetch-like function.
 */
export function fetcher(option) {
  if (typeof option === 'function') return option;
  const base = option && option.headers;
  return (url, init) => {
    const headers = new Headers(base || undefined);
    for (const [k, v] of new Headers(init.headers || undefined)) headers.set(k, v);
    return globalThis.fetch(url, { ...init, headers });
  };
}

/**
 * Downloads `url` to one Uint8Array. options: { fetch, signal, onProgress, log, retries, backoffMs,
 * maxBytes }. `log.info` hears each resume; failures reject with a NeedleError ('fetch_failed',
 * 'aborted', or 'too_large' past `maxBytes`: not retried).
 */
export async function download(url, options = {}) {
  const { signal, log } = options;
  const onProgress = options.onProgress || (() => {});
  const doFetch = fetcher(options.fetch);
  const retries = options.retries ?? RETRIES;
  const backoffMs = options.backoffMs ?? BACKOFF_MS;
  const ceiling = maxBytesOption(options.maxBytes);
  let chunks = []; // the body's chunks while its length is unknown
  let whole = null; // the file's bytes, at the length the server announced
  let loaded = 0;
  let total = null;
  let validator = null;
  let resumable = false;
  let failures = 0;

  const retry = async (why) => {
    if (signal && signal.aborted) throw new NeedleError('aborted', 'load aborted');
    if (failures >= retries)
      throw new NeedleError('fetch_failed', `GET ${url}: ${why} (after ${failures + 1} tries)`);
    const wait = backoffMs * 2 ** failures;
    failures += 1;
    if (!resumable && loaded > 0) {
      chunks = [];
      loaded = 0;
    }
    if (log)
      log.info(
        `needle-web: ${why}; ${loaded ? `resuming at byte ${loaded}` : 'starting again'} in ${wait} ms`,
      );
    await sleep(wait, signal);
  };

  for (;;) {
    const headers = {};
    if (loaded > 0) {
      headers.range = `bytes=${loaded}-`;
      if (validator) headers['if-range'] = validator;
    }
    let response;
    try {
      response = await doFetch(url, { signal, headers, credentials: 'same-origin' });
    } catch (e) {
      if (signal && signal.aborted) throw new NeedleError('aborted', 'load aborted');
      await retry(`the request failed (${e.message})`);
      continue;
    }
    if (loaded > 0 && response.status === 206 && rangeStart(response) === loaded) {
      // The rest of the same file: append to what we hold.
    } else if (response.ok && response.status !== 206) {
      // A whole file: the first response, or the server ignored the range (or the file changed).
      chunks = [];
      loaded = 0;
      const length = Number(response.headers.get('content-length'));
      total =
        Number.isSafeInteger(length) && length > 0 && !response.headers.get('content-encoding')
          ? length
          : null;
      try {
        refusePage(url, response);
        if (total !== null && total > ceiling)
          throw tooLarge(url, `the server announces ${total} bytes`, ceiling);
        // Read into one buffer of that length: the download's memory is the file's size.
        whole = total === null ? null : whole?.length === total ? whole : held(url, total);
      } catch (e) {
        await response.body?.cancel().catch(() => {});
        throw e;
      }
      validator = validatorOf(response);
      resumable = response.headers.get('accept-ranges') === 'bytes' && total !== null;
    } else if (response.status >= 500 || response.status === 206) {
      await retry(`HTTP ${response.status}`);
      continue;
    } else {
      throw new NeedleError(
        'fetch_failed',
        `GET ${url}: HTTP ${response.status} ${response.statusText}`.trim(),
        {
          status: response.status,
        },
      );
    }
    try {
      await readBody(response, 'download', onProgress, signal, {
        start: loaded,
        total,
        sink: (chunk) => {
          const end = loaded + chunk.length;
          if (total !== null && end > total)
            throw new NeedleError(
              'fetch_failed',
              `GET ${url}: the body is longer than the ${total} bytes its headers announce`,
            );
          if (end > ceiling) throw tooLarge(url, `the body runs past ${loaded} bytes`, ceiling);
          if (whole) whole.set(chunk, loaded);
          else chunks.push(chunk);
          loaded = end;
        },
      });
    } catch (e) {
      // An abort, or a body refused above (trying again would refuse it again).
      if (e instanceof NeedleError) throw e;
      await retry(`the connection was lost after ${loaded} bytes (${e.message})`);
      continue;
    }
    if (total !== null && loaded < total) {
      await retry(`the body ended after ${loaded} of ${total} bytes`);
      continue;
    }
    return whole ?? concat(chunks, loaded);
  }
}
