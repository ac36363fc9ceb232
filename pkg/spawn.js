// Starting the engine's module Web Worker from wherever the package is served. A page may start a
// worker only from its own origin, so when the package comes from a CDN (jsDelivr, esm.sh, unpkg)
// or another local origin, the worker is a same-origin `blob:` module whose one line imports the
// real worker.js; worker.js then finds its wasm beside itself (its import.meta.url is the CDN's).
// `assetBase` (the folder holding worker.js and wasm/) or `workerUrl` point elsewhere, for a
// bundle that did not copy the package root. A worker that cannot start is a NeedleError.
import { NeedleError } from './protocol.js';

/** The worker script's URL: `workerUrl`, else worker.js under `assetBase`, else `fallback`. */
export function workerScriptUrl({ assetBase, workerUrl } = {}, fallback) {
  const base = globalThis.location ? globalThis.location.href : undefined;
  try {
    if (workerUrl !== undefined && workerUrl !== null) return new URL(String(workerUrl), base);
    if (assetBase !== undefined && assetBase !== null) {
      const folder = String(assetBase).endsWith('/') ? String(assetBase) : `${assetBase}/`;
      return new URL('worker.js', new URL(folder, base));
    }
  } catch (e) {
    throw new NeedleError('invalid_argument', `assetBase/workerUrl is not a URL: ${e.message}`);
  }
  return fallback;
}

// A variable, not a literal in `new URL(...)`: bundlers must not emit worker.js as a plain asset.
const WORKER = './worker.js';

/**
 * The `spawn(name)` startHost uses: `spawnHere` (index.js's literal `new Worker(new URL(...))`, which
 * bundlers rewrite) unless `options` name another script or the package is another origin's.
 */
export function workerSpawner(options, packageUrl, spawnHere) {
  const packaged = new URL(WORKER, packageUrl);
  const url = workerScriptUrl(options, null) ?? (startsAsIs(packaged) ? null : packaged);
  if (url) {
    const spawn = (name) => spawnModuleWorker(url, name);
    // The pool's threads (host/pool.js) then start from thread.js beside that worker script too.
    spawn.threadScript = new URL('thread.js', url);
    return spawn;
  }
  return (name) => {
    try {
      return spawnHere(name);
    } catch (e) {
      throw new NeedleError(
        'worker_failed',
        `cannot start the engine's worker: ${(e && e.message) || e}`,
      );
    }
  };
}

/**
 * `file` beside the module at `moduleUrl`. Here, not at the caller: bundlers rewrite (or warn
 * about) `new URL(…, import.meta.url)` wherever they see it.
 */
export function besideModule(moduleUrl, file) {
  return new URL(file, moduleUrl);
}

/** Whether `url` may be a Worker's script here as it is (same origin, or blob:/data:). */
export function startsAsIs(url) {
  // Only an http(s) script of another origin needs the wrapper: webpack, for one, writes the
  // source file's file: URL for import.meta.url, and the literal spawn is what it rewrites.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return true;
  return !globalThis.location || url.origin === globalThis.location.origin;
}

/** A module Worker running `url`, through a same-origin blob: wrapper when `url` is another origin's. */
export function spawnModuleWorker(url, name) {
  let wrapper = null;
  try {
    if (startsAsIs(url)) return new Worker(url, { type: 'module', name });
    const source = `import ${JSON.stringify(url.href)};\n`;
    wrapper = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    return new Worker(wrapper, { type: 'module', name });
  } catch (e) {
    throw new NeedleError(
      'worker_failed',
      `cannot start the engine's worker from ${url.href}: ${(e && e.message) || e}`,
    );
  } finally {
    // The worker has fetched what it needs to by the time it runs; the URL is not needed after.
    if (wrapper) setTimeout(() => URL.revokeObjectURL(wrapper), 60_000);
  }
}
