// Threads are chosen by what the engine needs (a shared WebAssembly memory it can post to other
// workers, on a cross-origin isolated page, in a worker), not by the `SharedArrayBuffer` global's
// name (issue 42). WebKitGTK 2.50's isolated pages make shared memories but have neither the
// global nor the posting; an engine with the posting but no global still gets threads.
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

test('shared memories that cannot be posted to a worker (WebKitGTK): no threads, and why', () => {
  class MessageChannel extends globalThis.MessageChannel {
    constructor() {
      super();
      this.port1.postMessage = () => {
        throw new DOMException('The object can not be cloned.', 'DataCloneError');
      };
    }
  }
  const support = withGlobals({ crossOriginIsolated: true, Worker, MessageChannel }, () => threadSupport(true));
  assert.deepEqual(support, { ok: false, why: 'this engine cannot share WebAssembly memory with other workers' });
});

test('threads run only in a worker engine', () => {
  assert.equal(withGlobals({ crossOriginIsolated: true, Worker }, () => threadSupport(false)).ok, false);
});
