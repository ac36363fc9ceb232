// How the engine host calls a session method that may wait for the GPU: one of the list in
// src/web/calls.rs, by its JS name (tests/js/session-calls.test.mjs holds the names used here
// to that list). On the CPU builds that is the method itself, synchronous. On the `gpu` build
// the method's Rust side waits for WebGPU by suspending its wasm stack (src/gpu/wait.rs), which
// only a call entered through `WebAssembly.promising` may do, and the glue's own method cannot
// be that entry: it reads the export's result synchronously, where a promising export returns
// a promise. So the call is staged (`stage`, a plain method: the glue converts the arguments),
// run by the raw export `session_run_staged` (only the session pointer in, nothing out) through
// promising, and its value or NeedleError taken back with `take_result` (src/web/suspend.rs).
//
// While a call is suspended the event loop runs: the worker's message loop records an abort (it
// queues every other request), and the generate loop applies it after the call returns. Nothing
// may call into the session meanwhile: the glue's borrow flag would throw "recursive use", and
// the guard here says which call it was.
import { NeedleError } from '../protocol.js';

/**
 * `call(session, name, ...args)` for a session of `variant`'s build: a promise of the method's
 * value. `exports`: the instance's raw exports (what the glue's init resolves to).
 */
export function sessionCaller(variant, exports) {
  if (variant !== 'gpu') return async (s, name, ...args) => s[name](...args);
  const run = WebAssembly.promising(exports.session_run_staged);
  const busy = new WeakSet();
  return async (s, name, ...args) => {
    if (busy.has(s))
      throw new NeedleError('internal', `session.${name} called while another call is suspended`);
    busy.add(s);
    try {
      s.stage(name, args);
      await run(s.__wbg_ptr);
      return s.take_result();
    } finally {
      busy.delete(s);
    }
  };
}
