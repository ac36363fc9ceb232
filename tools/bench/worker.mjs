// The Chromium side of a benchmark run: a module Web Worker, as pkg/worker.js runs the engine
// for users. Receives { variant, bytes (transferred), requests, kv, numerics, threads }, answers
// { records } or { error }.
import { runBench } from './harness.mjs';

self.onmessage = async ({ data: { variant, bytes, requests, kv, numerics, threads } }) => {
  try {
    const base = new URL(`/pkg/wasm/${variant}/`, self.location.href);
    const glue = await import(new URL('needle.js', base).href);
    const exports = await glue.default({ module_or_path: new URL('needle_bg.wasm', base) });
    // The threaded build starts its pool as the package does (one thread per core) unless the
    // run names a pool size.
    if (variant === 'threaded')
      await (await import('/pkg/threads.js')).startThreads(
        glue,
        threads ?? navigator.hardwareConcurrency,
      );
    self.postMessage({
      records: runBench({
        glue,
        memory: exports.memory,
        bytes: new Uint8Array(bytes),
        requests,
        kv,
        numerics,
      }),
    });
  } catch (e) {
    self.postMessage({ error: String((e && e.stack) || e) });
  }
};
