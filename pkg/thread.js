// One thread of the threaded build's pool: a module Web Worker started by threads.js. It
// instantiates the engine's module over the engine's shared memory, says so, then runs a rayon
// thread (src/web/threads.rs) until the page goes: that call never returns.
import * as glue from './wasm/threaded/needle.js';
import { ThreadMsg } from './protocol.js';

self.onmessage = async ({ data }) => {
  if (!data || data.type !== ThreadMsg.INIT) return;
  try {
    await glue.default({ module_or_path: data.module, memory: data.memory });
  } catch (e) {
    self.postMessage({ type: ThreadMsg.FAILED, message: String((e && e.message) || e) });
    return;
  }
  self.postMessage({ type: ThreadMsg.READY });
  glue.poolThread();
};
