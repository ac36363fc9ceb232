// The threaded build's thread pool, started from the engine's worker (worker.js): `count` module
// Web Workers (thread.js) share the engine's WebAssembly memory and become rayon's threads, across
// which the kernels split big matrix products and attention heads (src/kernels/parallel.rs).
//
// Threads need a shared WebAssembly memory that can be posted to other workers, which browsers
// give only to cross-origin isolated pages (served with `Cross-Origin-Opener-Policy: same-origin`
// and `Cross-Origin-Embedder-Policy: require-corp`), and a worker thread: the engine thread blocks
// (Atomics.wait) while the pool works, which a page's main thread may not.
import { besideModule, spawnModuleWorker, startsAsIs } from './spawn.js';

/**
 * Whether this engine makes shared WebAssembly memories and can post them to other workers, as
 * the pool does. Asked of the engine itself, not of the `SharedArrayBuffer` global: WebKitGTK
 * (2.50) has neither that global nor the posting (DataCloneError), yet makes shared memories.
 */
export function sharedWasmMemory() {
  try {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    if (typeof Atomics !== 'object') return false;
    if (typeof MessageChannel === 'function') {
      const { port1, port2 } = new MessageChannel();
      try {
        port1.postMessage(memory);
      } finally {
        port1.close();
        port2.close();
      }
    }
    return true;
  } catch {
    return false;
  }
}

import { ThreadMsg } from './protocol.js';

/** Threads a pool may use here, or why there can be none. */
export function threadSupport(inWorker) {
  if (!inWorker || typeof Worker !== 'function')
    return { ok: false, why: 'threads run only in a Web Worker engine' };
  if (globalThis.crossOriginIsolated !== true) {
    return {
      ok: false,
      why: 'threads need a cross-origin isolated page (COOP: same-origin, COEP: require-corp)',
    };
  }
  if (!sharedWasmMemory()) {
    return { ok: false, why: 'this engine cannot share WebAssembly memory with other workers' };
  }
  const cores = (globalThis.navigator && navigator.hardwareConcurrency) || 1;
  return { ok: true, cores };
}

/** Most threads `threads: 'auto'` starts: past this the matrices are too small to share out. */
export const AUTO_MAX_THREADS = 8;

// The pool, once built (one per wasm instance): its thread count and, where this thread started
// them, its workers (referenced for the pool's life: a worker nothing references may be collected).
let running = null;

/**
 * Starts `count` thread workers on this thread, posts each `init` (the engine's
 * `{ type: ThreadMsg.INIT, module, memory }`), and resolves to the workers once every one is up.
 * `script`: the thread script's URL (default: thread.js beside this module). Rejects (terminating
 * what it started) if a thread fails or is not up within `timeoutMs`.
 */
export async function spawnThreads(init, count, { script, timeoutMs = 30000 } = {}) {
  const workers = [];
  let timer;
  const up = Array.from({ length: count }, (_, i) => {
    const name = `needle-web thread ${i + 1}`;
    // From a CDN the thread script is another origin's: started through a blob: module (spawn.js).
    const remote = besideModule(import.meta.url, 'thread.js');
    const worker = script
      ? spawnModuleWorker(script, name)
      : startsAsIs(remote)
        ? new Worker(new URL('./thread.js', import.meta.url), { type: 'module', name })
        : spawnModuleWorker(remote, name);
    workers.push(worker);
    return new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => {
        if (data && data.type === ThreadMsg.READY) resolve();
        else if (data && data.type === ThreadMsg.FAILED) reject(new Error(data.message));
      };
      worker.onerror = (e) => {
        if (typeof e.preventDefault === 'function') e.preventDefault();
        reject(new Error(e.message || 'the thread script failed to load'));
      };
      worker.postMessage(init);
    });
  });
  const late = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the threads were not up within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([Promise.all(up), late]);
  } catch (e) {
    for (const w of workers) w.terminate();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return workers;
}

/**
 * Builds the initialised threaded `glue`'s pool on `count` threads; resolves to the thread count.
 * `spawn(init, count)` starts the thread workers and resolves once they are up: by default on
 * this thread (spawnThreads); the engine's worker has its client start them (host/pool.js).
 * Rejects if the threads do not start; the engine then stays on one thread.
 */
export async function startThreads(glue, count, spawn = spawnThreads) {
  if (running) return running.count;
  const init = { type: ThreadMsg.INIT, module: glue.poolModule(), memory: glue.poolMemory() };
  const workers = await spawn(init, count);
  glue.startPool(count);
  running = { count, workers };
  return count;
}
