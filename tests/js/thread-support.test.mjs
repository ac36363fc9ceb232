// Threads are chosen by what the engine needs (a shared WebAssembly memory on a cross-origin
// isolated page, in a worker), not by the `SharedArrayBuffer` global's name: WebKitGTK's isolated
// pages have shared wasm memories but no such global (issue 42).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { sharedWasmMemory, threadSupport } from '../../pkg/threads.js';

/** Runs `f` with globals replaced (undefined deletes one), then puts them back. */
function withGlobals(globals, f) {
  const saved = Object.fromEntries(Object.keys(globals).map((k) => [k, Object.getOwnPropertyDescriptor(globalThis, k)]));
  try {
    for (const [k, v] of Object.entries(globals)) {
      if (v === undefined) delete globalThis[k];
      else Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
    }
    return f();
  } finally {
    for (const [k, d] of Object.entries(saved)) {
      if (d) Object.defineProperty(globalThis, k, d);
      else delete globalThis[k];
    }
  }
}

const Worker = function Worker() {};

test('an isolated worker without the SharedArrayBuffer global still gets threads', () => {
  const support = withGlobals({ SharedArrayBuffer: undefined, crossOriginIsolated: true, Worker }, () => threadSupport(true));
  assert.equal(support.ok, true, support.why);
  assert.ok(support.cores >= 1);
});

test('no cross-origin isolation, or no shared wasm memory: no threads, and why', () => {
  const plain = withGlobals({ crossOriginIsolated: false, Worker }, () => threadSupport(true));
  assert.equal(plain.ok, false);
  assert.match(plain.why, /cross-origin isolated/);
  const Memory = function Memory(d) {
    if (d.shared) throw new TypeError('shared memories are not supported');
  };
  const unshared = withGlobals({ crossOriginIsolated: true, Worker, WebAssembly: { ...WebAssembly, Memory } }, () => threadSupport(true));
  assert.equal(unshared.ok, false);
  assert.equal(withGlobals({ WebAssembly: { ...WebAssembly, Memory } }, sharedWasmMemory), false);
  assert.equal(sharedWasmMemory(), true);
});

test('threads run only in a worker engine', () => {
  assert.equal(withGlobals({ crossOriginIsolated: true, Worker }, () => threadSupport(false)).ok, false);
});
