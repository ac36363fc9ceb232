// needle-web: Needle tool-calling models in the browser (and Node), off the main thread.
//
//   const needle = await Needle.load('https://example.com/needle.cact', { onProgress });
//   const { function_calls } = await needle.complete('turn on the lights', { tools });
//
// This file is the client proxy: it talks protocol.js to an engine host (worker.js) running in a
// module Web Worker, or inline where no Worker exists (Node).
import { Req, Reply, NeedleError, errorFromWire, toolsToJson } from './protocol.js';
import * as modelCache from './cache.js';
import { defaultModel, defaultModelSha256 } from './default-model.js';

export { NeedleError, defaultModel };

const DEFAULTS = Object.freeze({ maxTokens: 256, temperature: 0, seed: 0, topK: 0, topP: 1, constrained: false, extractive: false, valueSearch: false });

/** A pair of in-process ports with postMessage semantics (copying, asynchronous). */
function localPorts() {
  const defer = typeof setImmediate === 'function' ? setImmediate : (f) => setTimeout(f, 0);
  const make = () => ({ other: null, onmessage: null, closed: false });
  const a = make();
  const b = make();
  a.other = b;
  b.other = a;
  for (const p of [a, b]) {
    p.postMessage = (data, transfer) => {
      if (p.closed) return;
      const copy = structuredClone(data, { transfer: transfer || [] });
      defer(() => !p.other.closed && p.other.onmessage && p.other.onmessage({ data: copy }));
    };
    p.close = () => {
      p.closed = true;
    };
  }
  return [a, b];
}

function baseUrl() {
  if (typeof document !== 'undefined' && document.baseURI) return document.baseURI;
  if (typeof location !== 'undefined' && location.href) return location.href;
  if (typeof process !== 'undefined' && process.cwd) return `file://${process.cwd().replace(/\\/g, '/')}/`;
  return undefined;
}

/** Absolute URL for a URL-like source, resolved against the page (not the worker script). */
export function resolveUrl(url) {
  try {
    return new URL(String(url), baseUrl()).href;
  } catch {
    throw new NeedleError('bad_source', `not a URL: ${String(url)}`);
  }
}

/** A load source, checked: a URL (resolved), a Blob, or a view on the caller's bytes (not copied). */
function toSource(source) {
  if (typeof source === 'string' || source instanceof URL) return { kind: 'url', url: resolveUrl(source) };
  if (typeof Blob !== 'undefined' && source instanceof Blob) return { kind: 'blob', blob: source };
  if (source instanceof ArrayBuffer) return { kind: 'bytes', bytes: new Uint8Array(source) };
  if (ArrayBuffer.isView(source)) {
    return { kind: 'bytes', bytes: new Uint8Array(source.buffer, source.byteOffset, source.byteLength) };
  }
  throw new NeedleError('bad_source', 'source must be a URL, Uint8Array, ArrayBuffer, Blob or File');
}

/**
 * How a source crosses to the host, and what to transfer with it. Copies are decided here, once:
 * a URL is fetched (or read from the cache) by the host itself and a Blob/File crosses by
 * reference, so neither is copied on the way. Caller bytes reach an inline host by reference
 * (same thread: their one copy is the one into wasm memory) and a Worker by postMessage's clone,
 * the one extra copy a caller's buffer needs; `transfer: true` hands the caller's whole
 * ArrayBuffer over instead (detaching it).
 */
function handOver(src, host, transfer) {
  if (src.kind !== 'bytes') return { wire: src, transfer: [] };
  const { bytes } = src;
  if (host.lend) return { wire: { kind: 'lent', handle: host.lend(bytes) }, transfer: [] };
  const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return { wire: src, transfer: transfer && whole ? [bytes.buffer] : [] };
}

async function startHost(mode) {
  const useWorker = mode === true || (mode !== false && typeof Worker === 'function');
  if (useWorker) {
    if (typeof Worker !== 'function') throw new NeedleError('unsupported', 'Worker is not available here');
    const name = `needle-web ${uniqueId()}`;
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name });
    return { port: worker, terminate: () => worker.terminate(), worker, onDeath: (cb) => watchWorker(worker, name, cb) };
  }
  const { serve } = await import('./worker.js');
  const [client, host] = localPorts();
  const { lend } = serve(host);
  return { port: client, terminate: () => (client.close(), host.close()), worker: null, lend };
}

/**
 * Calls `onDead(why)` when the worker is gone or unusable: an uncaught error (also a script that
 * fails to load), a message that cannot be decoded, or, where Web Locks exist, its end for any
 * reason (terminated, crashed, out of memory), which no event reports: the worker holds a lock
 * named after itself for its whole life (and says `alive` once it does), so our request for the
 * same lock is granted only when it is gone.
 */
function watchWorker(worker, name, onDead) {
  worker.addEventListener('error', (e) => {
    if (typeof e.preventDefault === 'function') e.preventDefault();
    onDead(`uncaught error: ${e.message || 'the worker script failed'}`);
  });
  worker.addEventListener('messageerror', () => onDead('a message could not be decoded'));
  const locks = globalThis.navigator && navigator.locks;
  if (!locks) return;
  const alive = (e) => {
    if (!e.data || e.data.type !== Reply.ALIVE) return;
    worker.removeEventListener('message', alive);
    locks.request(name, () => onDead('it ended'));
  };
  worker.addEventListener('message', alive);
}

function uniqueId() {
  const c = globalThis.crypto;
  return c && typeof c.randomUUID === 'function' ? c.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/** A loaded model. Create with `Needle.load`; all methods are safe to call concurrently (they queue). */
export class Needle {
  #host;
  #nextId = 1;
  #pending = new Map(); // id -> { resolve, reject, onToken, onProgress }
  #disposed = false;
  #death = null; // the worker_died error once the engine host is gone
  #info = null;

  constructor(host) {
    if (!host || !host.port) throw new TypeError('use Needle.load(source, options)');
    this.#host = host;
    host.port.onmessage = (e) => this.#receive(e.data);
    if (host.onDeath) host.onDeath((why) => this.#die(why));
  }

  /**
   * Loads a `.cact` model. `source`: URL (string or URL), Uint8Array, ArrayBuffer, Blob or File;
   * omitted, the package's bundled default model (`defaultModel`), checked against its SHA-256.
   * options: { onProgress({phase, loaded, total}), integrity, cache = true, worker = 'auto',
   *            kv: 'f32' | 'int8', numerics: 'exact' | 'deploy', layers, maxContext,
   *            simd: 'auto' | boolean, transfer = false, signal }
   * Phases: 'download' | 'cache' | 'read' | 'init'. Rejects with a NeedleError.
   */
  static async load(source = defaultModel, options = {}) {
    options = options ?? {};
    const src = toSource(source);
    const { onProgress, signal } = options;
    const opts = {
      integrity: options.integrity ?? (src.url === defaultModel ? defaultModelSha256 : undefined),
      cache: options.cache,
      kv: options.kv,
      numerics: options.numerics,
      layers: options.layers,
      context: options.maxContext,
      simd: options.simd === 'auto' ? undefined : options.simd,
    };
    modelCache.integrityHex(opts.integrity); // a malformed one rejects before a host starts
    const host = await startHost(options.worker ?? 'auto');
    const needle = new Needle(host);
    const { wire, transfer } = handOver(src, host, options.transfer === true);
    try {
      needle.#info = await needle.#call(Req.LOAD, { source: wire, options: opts }, { onProgress, signal, transfer });
    } catch (e) {
      needle.dispose();
      throw e;
    }
    return needle;
  }

  /** Whether Cache Storage holds a copy of the model at `url`. */
  static cached(url) {
    return modelCache.isCached(resolveUrl(url));
  }

  /** Deletes the cached copy of the model at `url`; resolves to whether there was one. */
  static evict(url) {
    return modelCache.evict(resolveUrl(url));
  }

  /** `{ models: [{url, bytes, sha256, cachedAt}], bytes, usage, quota }`. */
  static cacheUsage() {
    return modelCache.cacheUsage();
  }

  /** Model facts (generation, geometry, heads, kv bits) and how it was loaded. */
  get info() {
    return this.#info;
  }

  /** Refreshes `info` (its `kv_bytes` grows as the context fills). */
  async refreshInfo() {
    this.#info = await this.#call(Req.INFO, {});
    return this.#info;
  }

  /**
   * Runs one query to completion. options: { tools, system, maxTokens, temperature, seed, topK,
   * topP, constrained, extractive, valueSearch, layers, kv, numerics, signal, onToken({token, text}) }. An abort rejects with an
   * AbortError whose `result` holds what was generated so far.
   */
  complete(query, options = {}) {
    const { signal, onToken } = options ?? {};
    return this.#request(Req.COMPLETE, () => ({ request: toRequest(query, options ?? {}) }), { signal, onToken });
  }

  /**
   * Like complete, as an async iterator of `{token, text}` chunks, ending with the final result.
   * Leaving the loop early (break, return, throw) stops the generation.
   */
  async *stream(query, options = {}) {
    const stop = new AbortController();
    const outer = options.signal;
    const forward = () => stop.abort();
    if (outer) {
      if (outer.aborted) stop.abort();
      else outer.addEventListener('abort', forward, { once: true });
    }
    const items = [];
    let wake = null;
    const push = (item) => {
      items.push(item);
      if (wake) wake();
    };
    const done = this.complete(query, { ...options, signal: stop.signal, onToken: (chunk) => push({ chunk }) }).then(
      (value) => push({ value }),
      (error) => push({ error }),
    );
    let finished = false;
    try {
      for (;;) {
        if (items.length === 0) await new Promise((r) => (wake = r));
        wake = null;
        const item = items.shift();
        if (item.chunk) {
          if (options.onToken) options.onToken(item.chunk);
          yield item.chunk;
        } else {
          finished = true;
          if (item.error) throw item.error;
          yield item.value;
          return;
        }
      }
    } finally {
      if (outer) outer.removeEventListener('abort', forward);
      if (!finished) stop.abort();
      await done;
    }
  }

  /** Clears the conversation state (KV cache). */
  reset() {
    return this.#call(Req.RESET, {});
  }

  /** Token ids of `text` (no BOS). */
  tokenize(text) {
    return this.#request(Req.TOKENIZE, () => ({ text: String(text) }));
  }

  /** Text of token ids; an id outside the vocabulary rejects with token_out_of_vocab. */
  detokenize(ids) {
    return this.#request(Req.DETOKENIZE, () => ({ ids: Array.from(ids, Number) }));
  }

  /** The exact prompt text the model sees for a query. */
  render(query, options = {}) {
    return this.#request(Req.RENDER, () => ({
      query: String(query),
      tools: toolsToJson(options?.tools),
      system: optionalText(options?.system),
    }));
  }

  /** Logits after each of `ids` (a Float32Array of ids.length x vocab), from a fresh state. */
  logits(ids) {
    return this.#request(Req.LOGITS, () => ({ ids: Array.from(ids, Number) }));
  }

  /** Stops the worker and frees the model. Pending calls reject with code 'disposed' (or 'worker_died'). */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    const port = this.#host.port;
    if (this.#host.worker) {
      this.#host.terminate();
    } else {
      // Inline there is nothing to terminate: stop what runs, free the engine, then close the ports.
      for (const p of pending) port.postMessage({ type: Req.ABORT, target: p.id });
      const id = this.#nextId++;
      const close = () => this.#host.terminate();
      this.#pending.set(id, { id, resolve: close, reject: close });
      port.postMessage({ type: Req.DISPOSE, id });
    }
    const why = this.#death ?? new NeedleError('disposed', 'this model was disposed');
    for (const p of pending) p.reject(why);
  }

  /** True after `dispose()`, and after the engine's worker died (then calls reject with worker_died). */
  get disposed() {
    return this.#disposed;
  }

  /**
   * Sends one request whose payload `build` makes from the caller's arguments: whatever it throws
   * becomes a rejected promise with a NeedleError, never a synchronous throw.
   */
  #request(type, build, options) {
    let payload;
    try {
      payload = build();
    } catch (e) {
      return Promise.reject(asArgumentError(e));
    }
    return this.#call(type, payload, options);
  }

  #call(type, payload, { signal, onToken, onProgress, transfer } = {}) {
    if (this.#death) return Promise.reject(this.#death);
    if (this.#disposed) return Promise.reject(new NeedleError('disposed', 'this model was disposed'));
    if (signal && signal.aborted) return Promise.reject(new NeedleError('aborted', 'aborted before it started'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.#host.port.postMessage({ type: Req.ABORT, target: id });
      const cleanup = () => signal && signal.removeEventListener('abort', onAbort);
      this.#pending.set(id, {
        id,
        onToken,
        onProgress,
        resolve: (v) => (cleanup(), resolve(v)),
        reject: (e) => (cleanup(), reject(e)),
      });
      if (signal) signal.addEventListener('abort', onAbort, { once: true });
      try {
        this.#host.port.postMessage({ type, id, ...payload }, transfer || []);
      } catch (e) {
        // Something in the payload cannot be cloned.
        this.#pending.delete(id);
        cleanup();
        reject(asArgumentError(e));
      }
    });
  }

  #receive(msg) {
    const p = this.#pending.get(msg.id);
    if (!p) return;
    switch (msg.type) {
      case Reply.PROGRESS:
        if (p.onProgress) p.onProgress({ phase: msg.phase, loaded: msg.loaded, total: msg.total });
        break;
      case Reply.TOKEN:
        if (p.onToken) p.onToken({ token: msg.token, text: msg.text });
        break;
      case Reply.RESULT:
        this.#pending.delete(msg.id);
        p.resolve(msg.value);
        break;
      case Reply.ERROR:
        this.#pending.delete(msg.id);
        p.reject(errorFromWire(msg.error));
        break;
    }
  }

  /** The engine host is gone (crashed, killed, out of memory): this instance is disposed for good. */
  #die(why) {
    if (this.#disposed) return;
    this.#death = new NeedleError('worker_died', `the engine's worker died (${why}); load the model again`);
    this.dispose();
  }
}

/** A caller's argument that could not be converted or posted, as a typed error. */
function asArgumentError(e) {
  return e instanceof NeedleError ? e : new NeedleError('invalid_argument', `cannot send this request: ${(e && e.message) || e}`);
}

/** An optional text argument: null when absent, else its string form. */
function optionalText(v) {
  return v === undefined || v === null ? null : String(v);
}

function toRequest(query, o) {
  const num = (v, d) => (v === undefined || v === null ? d : Number(v));
  return {
    query: String(query),
    tools: toolsToJson(o.tools),
    system: optionalText(o.system),
    maxTokens: num(o.maxTokens, DEFAULTS.maxTokens),
    temperature: num(o.temperature, DEFAULTS.temperature),
    seed: num(o.seed, DEFAULTS.seed),
    topK: num(o.topK, DEFAULTS.topK),
    topP: num(o.topP, DEFAULTS.topP),
    constrained: Boolean(o.constrained ?? DEFAULTS.constrained),
    extractive: Boolean(o.extractive ?? DEFAULTS.extractive),
    valueSearch: Boolean(o.valueSearch ?? DEFAULTS.valueSearch),
    layers: num(o.layers, null),
    kv: optionalText(o.kv),
    numerics: optionalText(o.numerics),
  };
}

export default Needle;
