// The one message protocol between the client proxy (index.js) and the engine host (worker.js).
// Both sides import this file, so a message shape is defined once.
//
// client -> host: { type, id, ...payload }          (every request carries a fresh id)
// host -> client: { type: 'progress' | 'token' | 'result' | 'error', id, ... }
// Requests run one at a time, in the order they were sent; only `abort` acts at once.

export const PROTOCOL = 1;

/** A Needle's one-request method, for the package's relays (extension.js), not for users. */
export const REQUEST = Symbol('needle-web request');

/** Request types the host understands. */
export const Req = Object.freeze({
  LOAD: 'load', // { source, options } -> model info
  // { request } -> final result; 'token' messages stream before it. `request.turns` (the
  // conversation so far, [{ role: 'user' | 'assistant' | 'tool', content }]) and `request.date`
  // (the date fact's value, 'YYYY-MM-DD Ddd HH:MM') are optional; the result carries
  // `validation` and `usage.cached_tokens`.
  COMPLETE: 'complete',
  ABORT: 'abort', // { target } -> nothing; stops request `target` within one token
  RESET: 'reset', // {} -> null
  INFO: 'info', // {} -> model info
  TOKENIZE: 'tokenize', // { text } -> Uint32Array
  DETOKENIZE: 'detokenize', // { ids } -> string
  RENDER: 'render', // { query, tools, system } -> string
  LOGITS: 'logits', // { ids } -> Float32Array, rows x vocab
  // { tools, system, date, engine? } -> { key, held }: the stored-snapshot key of that system +
  // tools prefix (null when it has none to keep, or `engine` options rebuild the engine) and how
  // the engine came to hold it, if it does
  // ('loaded' | 'saved' | 'prefilled' | 'request').
  PREFIX: 'prefix',
  // { tools, system, date, key, snapshot?, keep } -> { key, snapshot, tokens, bytes? }: brings
  // that prefix into the engine (engine/prefix.js): nothing to do ('held'), the snapshot given
  // ('loaded'), else prefilled in chunks (abortable); `bytes`: its snapshot, when `keep`.
  PREPARE: 'prepare',
  SNAPSHOT: 'snapshot', // { bytes } -> { key, tokens }: loads a snapshot as the engine's prefix
  // A connected page's prepare() and loadSnapshot(), sent whole to the engine's own Needle by a
  // relay (extension.js), which runs them beside its snapshot store: { tools, system, date } ->
  // prepare()'s reply; { source: an absolute URL or a Uint8Array } -> { tokens }.
  RELAYED_PREPARE: 'relayed-prepare',
  RELAYED_SNAPSHOT: 'relayed-snapshot',
  DISPOSE: 'dispose', // {} -> null; frees the engine
  THREADS: 'threads-up', // { target, error? }: answers Reply.THREADS at once (the threads are up, or why not)
});

/** Reply types the host sends. */
export const Reply = Object.freeze({
  PROGRESS: 'progress', // { phase, loaded, total }
  TOKEN: 'token', // { token, text }
  RESULT: 'result', // { value }
  ERROR: 'error', // { error: { name, code, message, result? } }
  LOG: 'log', // { level: 'error' | 'warn' | 'info' | 'debug', message }: for the client's logger
  ALIVE: 'alive', // no id; a Web Worker host holds its life lock (host/index.js watchWebWorker)
  // { id (the load's), count, init }: start `count` pool threads with `init` (threads.js
  // spawnThreads) and answer Req.THREADS. The client starts them: in Firefox a worker's own
  // `new Worker` can block it for good (issue 42).
  THREADS: 'threads',
});

/** Messages between the engine's worker and the threads of its pool (threads.js, thread.js). */
export const ThreadMsg = Object.freeze({
  INIT: 'needle-web-thread', // { module, memory } -> the thread instantiates the module
  READY: 'needle-web-thread-ready', // the thread runs the pool's work loop
  FAILED: 'needle-web-thread-failed', // { message }
});

/**
 * Every failure the package reports. `code` is stable and machine-readable: the Rust core's codes
 * (`bad_tag`, `truncated`, `bad_header`, `bad_tensor`, `bad_tokenizer`, `token_out_of_vocab`,
 * `context_full`, `bad_json`, `invalid_utf8`, `invalid_argument`, `unsupported`, `bad_snapshot`,
 * `snapshot_mismatch`) plus the JS ones:
 * `aborted`, `bad_source`, `fetch_failed`, `too_large` (a download past `maxBytes`), `integrity`,
 * `disposed`, `worker_died`, `timeout`, `engine_trap` (a WebAssembly trap: that request fails, the
 * engine is built again), `wasm_failed`, `ungrounded`, `internal`, and the GPU
 * ones: `gpu_unavailable` (backend 'webgpu' where it cannot run), `gpu_lost` (the device was lost).
 */
export class NeedleError extends Error {
  constructor(code, message, extra = undefined) {
    super(message);
    // Aborts keep the platform's name so `e.name === 'AbortError'` checks work as they do for fetch.
    this.name = code === 'aborted' ? 'AbortError' : 'NeedleError';
    this.code = code;
    if (extra) Object.assign(this, extra);
  }
}

/** An Error (from wasm, fetch or our own code) as a plain object that survives postMessage. */
export function errorToWire(e) {
  if (e instanceof NeedleError) {
    const wire = { code: e.code, message: e.message };
    if (e.status !== undefined) wire.status = e.status;
    if (e.maxBytes !== undefined) wire.maxBytes = e.maxBytes;
    if (e.result !== undefined) wire.result = e.result;
    return wire;
  }
  // Errors thrown by the wasm surface carry the core's code.
  if (e && typeof e === 'object' && typeof e.code === 'string' && e.name === 'NeedleError') {
    return { code: e.code, message: String(e.message) };
  }
  if (e && e.name === 'AbortError')
    return { code: 'aborted', message: String(e.message || 'aborted') };
  if (typeof WebAssembly !== 'undefined' && e instanceof WebAssembly.RuntimeError) {
    return { code: 'engine_trap', message: `the engine trapped: ${e.message}` };
  }
  // A bug: never a raw panic string as the code.
  return { code: 'internal', message: String((e && e.message) || e) };
}

/** The inverse of errorToWire, on the receiving side. */
export function errorFromWire(wire) {
  const { code, message, ...extra } = wire;
  return new NeedleError(code, message, Object.keys(extra).length ? extra : undefined);
}

/** Converts a tools option (array/object or JSON text) to the JSON text the core renders. */
export function toolsToJson(tools) {
  if (tools === undefined || tools === null) return '[]';
  if (typeof tools === 'string') return tools;
  if (typeof tools !== 'object') {
    throw new NeedleError(
      'invalid_argument',
      `tools must be an array of tool objects or JSON text, not a ${typeof tools}`,
    );
  }
  try {
    // JSON.stringify keeps insertion order, which is the order the prompt must show.
    return JSON.stringify(tools);
  } catch (e) {
    // A cycle or a BigInt: not JSON.
    throw new NeedleError('invalid_argument', `tools cannot be written as JSON: ${e.message}`);
  }
}
