// needle-web: Needle tool-calling models in the browser (and Node), off the main thread.
//
//   const needle = await Needle.load('https://example.com/needle.cact', { onProgress });
//   const { function_calls } = await needle.complete('turn on the lights', { tools });
//
// This file is the client proxy: it talks protocol.js to an engine host (worker.js) running in a
// module Web Worker, a Node worker_threads Worker, or inline (host/).
import { REQUEST, Req, Reply, NeedleError, errorFromWire, toolsToJson } from './protocol.js';
import { Conversation } from './conversation.js';
import { extract } from './extract.js';
import { generate } from './structured.js';
import { workerSpawner } from './spawn.js';
import { Completions } from './openai.js';
import * as storage from './storage/index.js';
import { evictRefused, fetchModel, integrityHex } from './storage/model.js';
import { maxBytesOption } from './storage/download.js';
import { makeLogger } from './log.js';
import { startHost } from './host/index.js';
import { isModelName, modelHost, resolveModel, setModelHost } from './models.js';
import { LOAD_STALL_MS, watchStall, withinStallBound } from './stall.js';
import { Prefixes, givenBytes } from './prepare.js';

export { NeedleError };

function baseUrl() {
  if (typeof document !== 'undefined' && document.baseURI) return document.baseURI;
  if (typeof location !== 'undefined' && location.href) return location.href;
  if (typeof process !== 'undefined' && process.cwd)
    return `file://${process.cwd().replace(/\\/g, '/')}/`;
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
  if (typeof source === 'string' || source instanceof URL)
    return { kind: 'url', url: resolveUrl(source) };
  if (typeof Blob !== 'undefined' && source instanceof Blob) return { kind: 'blob', blob: source };
  if (source instanceof ArrayBuffer) return { kind: 'bytes', bytes: new Uint8Array(source) };
  if (ArrayBuffer.isView(source)) {
    return {
      kind: 'bytes',
      bytes: new Uint8Array(source.buffer, source.byteOffset, source.byteLength),
    };
  }
  throw new NeedleError(
    'bad_source',
    'source must be a URL, Uint8Array, ArrayBuffer, Blob or File',
  );
}

/**
 * How a source crosses to the host, and what to transfer with it. Copies are decided here, once.
 * A URL is fetched (or read from storage) by the host itself and a Blob/File crosses by
 * reference, so neither is copied on the way. Bytes reach an inline host by reference (same
 * thread: their one copy is the one into wasm memory) and a worker by postMessage's clone, the
 * one extra copy a buffer someone else may still hold needs (the caller's; or a custom store's,
 * when this thread fetched through the caller's `fetch` or store); `transfer: true` hands the
 * caller's whole ArrayBuffer over instead (detaching it).
 */
function handOver(src, host, transfer) {
  if (src.kind !== 'bytes') return { wire: src, transfer: [] };
  const { bytes } = src;
  if (host.lend)
    return {
      wire: { ...src, kind: 'lent', bytes: undefined, handle: host.lend(bytes) },
      transfer: [],
    };
  const whole =
    bytes.buffer instanceof ArrayBuffer &&
    bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength;
  return { wire: src, transfer: transfer && whole ? [bytes.buffer] : [] };
}

// Here, at the package root, so `./worker.js` resolves beside the package in every layout.
const spawnWebWorker = (name) =>
  new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name });

// The default model is its own entry (`needle-web/default-model`), so a bundle that never loads it
// does not ship its 0.95 MB. A source-less `Needle.load()` still finds it where the package is
// served as files (Node, an import map): the specifier is a variable, which bundlers leave alone.
const DEFAULT_MODEL_MODULE = './default-model.js';

async function bundledDefault() {
  try {
    const m = await import(/* webpackIgnore: true */ /* @vite-ignore */ DEFAULT_MODEL_MODULE);
    return { url: m.defaultModel, sha256: m.defaultModelSha256 };
  } catch {
    throw new NeedleError(
      'bad_source',
      "no model given, and the default model is not beside this bundle: import { defaultModel } from 'needle-web/default-model' and pass it to Needle.load",
    );
  }
}

/** A loaded model. Create with `Needle.load`; all methods are safe to call concurrently (they queue). */
export class Needle {
  #host;
  #nextId = 1;
  #pending = new Map(); // id -> { resolve, reject, onToken, onProgress }
  #disposed = false;
  #death = null; // the worker_died error once the engine's worker is gone
  #info = null;
  #chat = null;
  #log;
  #relayed; // the engine is another Needle behind a relay (extension.js), which keeps the prefixes
  // prepare.js: prefixes ahead of requests, their snapshots (Needle.load sets the options; a
  // Needle made on a relayed host leaves them to the engine's side)
  #prefixes = new Prefixes((type, payload, o) => this.#post(type, payload, o), {
    snapshots: false,
  });
  // Calls go to the engine one after another, in the order they were made: a complete() may
  // first bring its prefix in (prepare.js), which takes more than one message.
  #lane = Promise.resolve();
  #pendingInLane = 0;

  constructor(host, log = makeLogger()) {
    if (!host || !host.port) throw new TypeError('use Needle.load(source, options)');
    this.#host = host;
    this.#log = log;
    this.#relayed = host.relayed === true;
    host.port.onmessage = (e) => this.#receive(e.data);
    if (host.onDeath) host.onDeath((why) => this.#die(why));
  }

  /**
   * Loads a `.cact` model. `source`: URL (string or URL), Uint8Array, ArrayBuffer, Blob or File; a
   * model name ('needle3', 'needle2', or a Hub repository 'owner/repo': options revision, file,
   * modelHost; models.js); omitted, the package's default model (`needle-web/default-model`),
   * checked against its SHA-256.
   * options: { onProgress({phase, loaded, total}), integrity, cache = 'auto', fetch, logger, logLevel, worker = 'auto',
   *            kv: 'f32' | 'int8', numerics: 'exact' | 'deploy', layers, maxContext,
   *            simd: 'auto' | boolean, threads: 'auto' | number | false, transfer = false, signal,
   *            backend: 'auto' | 'webgpu' | 'cpu' (engine/backend.js), gpuKernels: 'plain' | 'tiled',
   *            stallTimeout = 120000 (ms without progress, then the load fails: code 'timeout'),
   *            assetBase (the folder of worker.js and wasm/), workerUrl (spawn.js),
   *            snapshots: true | false | [url | bytes] (prefix snapshots, and ones made ahead of
   *            time), snapshotBudget (bytes stored snapshots may take; the least recently used go),
   *            maxBytes = 2 GiB (the most a download may take, less where the Hub lists less:
   *            code 'too_large' past it) }
   * Phases: 'download' | 'cache' | 'read' | 'init'. Rejects with a NeedleError.
   */
  static async load(source = undefined, options = {}) {
    options = options ?? {};
    const log = makeLogger(options);
    const fallback = source === undefined || source === null ? await bundledDefault() : null;
    const { onProgress, signal } = options;
    const integrity = options.integrity ?? (fallback ? fallback.sha256 : undefined);
    integrityHex(integrity); // a malformed one rejects before anything starts
    const name = fallback ? { source: fallback.url, size: null } : await named(source, options);
    const maxBytes = downloadCeiling(options, name);
    let wire = toSource(name.source);
    let cache = options.cache;
    let evictRefusedCopy = null; // (error) => drops a copy this thread stored that the engine refuses
    if (
      wire.kind === 'url' &&
      (typeof options.fetch === 'function' || storage.isCustomStore(cache))
    ) {
      // Functions cannot cross to the worker: this thread downloads (and stores), the worker gets bytes.
      const got = await fetchModel(wire.url, {
        integrity,
        cache,
        fetch: options.fetch,
        maxBytes,
        onProgress,
        signal,
        log,
      });
      const { url } = wire;
      evictRefusedCopy = (e) => evictRefused(url, options.cache, e, log);
      wire = {
        kind: 'bytes',
        bytes: got.bytes,
        sha256: got.sha256,
        from: got.from,
        storage: got.storage,
      };
      cache = 'none';
    }
    const host = await startHost(
      options.worker ?? 'auto',
      workerSpawner(options, import.meta.url, spawnWebWorker),
    );
    const needle = new Needle(host, log);
    const handed = handOver(wire, host, options.transfer === true);
    const opts = {
      integrity,
      // A caller's store is used on this thread (its functions cannot cross to the worker).
      cache: storage.isCustomStore(cache) ? 'none' : cache,
      fetch:
        options.fetch && typeof options.fetch === 'object'
          ? { headers: Object.fromEntries(new Headers(options.fetch.headers)) }
          : undefined,
      kv: options.kv,
      numerics: options.numerics,
      layers: options.layers,
      context: options.maxContext,
      gpu_kernels: options.gpuKernels,
      simd: options.simd === 'auto' ? undefined : options.simd,
      threads: options.threads,
      backend: options.backend,
      maxBytes,
    };
    const stall = options.stallTimeout ?? LOAD_STALL_MS;
    const watch = watchStall(stall, () => {
      needle.#death = new NeedleError('timeout', `the load made no progress for ${stall} ms`);
      needle.dispose();
    });
    const progress = (p) => (watch.alive(), onProgress && onProgress(p));
    try {
      needle.#info = await needle.#call(
        Req.LOAD,
        { source: handed.wire, options: opts },
        { onProgress: progress, signal, transfer: handed.transfer },
      );
      needle.#prefixes = new Prefixes(
        (type, payload, o) => needle.#post(type, payload, o),
        {
          snapshots: options.snapshots,
          snapshotBudget: options.snapshotBudget,
          cache: options.cache,
        },
        log,
      );
      if (Array.isArray(options.snapshots)) {
        // A snapshot only saves a prefill: one that cannot be read is a warning, not a failed load.
        for (const given of options.snapshots) {
          const { key } = await needle.#prefixes
            .give(snapshotSource(given), { signal })
            .catch((e) => {
              if (e.name === 'AbortError') throw e;
              log.warn(
                `needle-web: a snapshot given to load cannot be read (${e.message}); ignored`,
              );
              return { key: undefined };
            });
          if (key === null) log.warn('needle-web: a snapshot given to load is not one; ignored');
        }
      }
    } catch (e) {
      needle.dispose();
      await evictRefusedCopy?.(e);
      throw e;
    } finally {
      watch.stop();
    }
    return needle;
  }

  /**
   * Downloads a model into storage without starting an engine (a prefetch), through the path
   * `load` takes: `{ url, bytes, sha256, from, storage }`. `source`: a URL or a model name.
   * options: { onProgress, signal, integrity, cache, fetch, logger, logLevel,
   *            revision, file, modelHost, stallTimeout }.
   */
  static async download(source, options = {}) {
    options = options ?? {};
    const name = await named(source, options);
    const maxBytes = downloadCeiling(options, name);
    const { url } = toSource(name.source);
    if (!url) throw new NeedleError('bad_source', 'Needle.download takes a URL or a model name');
    const { onProgress, signal, integrity, cache, fetch } = options;
    const log = makeLogger(options);
    const stall = options.stallTimeout ?? LOAD_STALL_MS;
    const got = await withinStallBound(stall, signal, (bounded, alive) => {
      const progress = (p) => (alive(), onProgress && onProgress(p));
      const o = { integrity, cache, fetch, maxBytes, onProgress: progress, signal: bounded, log };
      return fetchModel(url, o);
    });
    return { url, bytes: got.bytes, sha256: got.sha256, from: got.from, storage: got.storage };
  }

  /** Whether model storage (`options.cache`, default 'auto') holds a copy of the model at `url`. */
  static async cached(url, options = {}) {
    return storage.isCached(toSource((await named(url, options)).source).url, options.cache);
  }

  /** Deletes the stored copy of the model at `url`; resolves to whether there was one. */
  static async evict(url, options = {}) {
    return storage.evict(toSource((await named(url, options)).source).url, options.cache);
  }

  /** Where model names resolve ('https://huggingface.co', or the mirror set here; null resets). */
  static get modelHost() {
    return modelHost();
  }

  static set modelHost(host) {
    setModelHost(host);
  }

  /**
   * `{ backend, models: [{url, bytes, sha256, cachedAt}], snapshots: [{url, key, bytes, cachedAt}],
   * bytes, usage, quota }`; `evict(url)` drops a model or a snapshot.
   */
  static cacheUsage(options = {}) {
    return storage.cacheUsage(options.cache);
  }

  /** Model facts (generation, geometry, heads, kv bits) and how it was loaded. */
  get info() {
    return this.#info;
  }

  /**
   * One protocol request as it is, in turn with this Needle's own calls (extension.js relays a
   * page's requests); `info` is kept.
   */
  [REQUEST](type, payload, options) {
    const reply = this.#inLane(() => this.#call(type, payload, options));
    return type === Req.INFO ? reply.then((info) => (this.#info = info)) : reply;
  }

  /** Refreshes `info` (its `kv_bytes` grows as the context fills). */
  async refreshInfo() {
    this.#info = await this.#inLane(() => this.#call(Req.INFO, {}));
    return this.#info;
  }

  /**
   * Runs one query to completion. options: the request's (index.d.ts `CompleteOptions`: tools,
   * system, maxTokens, ...; their names, defaults and checks are the core's, src/session/options.rs),
   * the engine's for this request (layers, kv, numerics) and this call's (signal, onToken({token,
   * text})). An abort rejects with an AbortError whose `result` holds what was generated so far.
   */
  complete(query, options = {}) {
    const { signal, onToken } = options ?? {};
    if (signal?.aborted)
      return Promise.reject(new NeedleError('aborted', 'aborted before it started'));
    let payload;
    try {
      payload = toRequest(query, options ?? {});
    } catch (e) {
      return Promise.reject(asArgumentError(e));
    }
    return this.#inLane(() => this.#call(Req.COMPLETE, payload, { signal, onToken }));
  }

  /**
   * Prefills the system + tools prefix of `{ tools, system, date }` in the engine now (off the
   * caller's thread), so the request that follows runs only its own tokens; a `complete()` sent
   * meanwhile waits for it. Loads its snapshot instead where one is stored or given, and stores
   * the one it makes. A no-op when the engine holds that prefix. Resolves to
   * `{ snapshot: 'held' | 'loaded' | 'saved' | 'prefilled' | null, tokens }` (null: no prefix
   * to keep, or a Needle 2 model); `signal` aborts it.
   */
  prepare(prefix = {}, { signal } = {}) {
    let p;
    try {
      p = {
        tools: toolsToJson(prefix?.tools),
        system: optionalText(prefix?.system),
        date: optionalText(prefix?.date),
      };
    } catch (e) {
      return Promise.reject(asArgumentError(e));
    }
    if (this.#relayed) return this.#inLane(() => this.#post(Req.RELAYED_PREPARE, p, { signal }));
    return this.#inLane(async () => {
      const { snapshot, tokens } = await this.#prefixes.ensure(p, { signal, explicit: true });
      return { snapshot, tokens };
    });
  }

  /**
   * Brings in a snapshot made ahead of time (`needle snapshot`, or another page's): `urlOrBytes`
   * is loaded as the engine's prefix now, and kept for the requests with that prefix. Resolves to
   * `{ tokens }`; a snapshot of another model or engine option rejects (`snapshot_mismatch`), a
   * damaged one too (`bad_snapshot`).
   */
  loadSnapshot(urlOrBytes, { signal } = {}) {
    let source;
    try {
      source = snapshotSource(urlOrBytes);
    } catch (e) {
      return Promise.reject(asArgumentError(e));
    }
    if (this.#relayed) {
      if (typeof source !== 'string') source = givenBytes(source);
      return this.#inLane(() => this.#post(Req.RELAYED_SNAPSHOT, { source }, { signal }));
    }
    return this.#inLane(() => this.#prefixes.load(source, { signal }));
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
    const done = this.complete(query, {
      ...options,
      signal: stop.signal,
      onToken: (chunk) => push({ chunk }),
    }).then(
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

  /**
   * A multi-turn conversation: options { tools, system, autoDate = false, stateless, logger }
   * (conversation.js). Its system + tools prefix is prepared at once (without the date fact,
   * which changes by the minute).
   */
  conversation(options = {}) {
    const c = new Conversation(this, options);
    if (!options?.autoDate && (c.tools.length > 0 || c.system !== null)) {
      this.prepare({ tools: c.tools, system: c.system }).catch((e) =>
        this.#log.debug(`needle-web: the conversation's prefix was not prepared (${e.message})`),
      );
    }
    return c;
  }

  /** The agent loop on a fresh conversation: tools may carry functions (agent.js). */
  run(query, options = {}) {
    const { tools, system, autoDate, logger, ...rest } = options;
    return new Conversation(this, { tools, system, autoDate, logger }).run(query, rest);
  }

  /** One-shot structured extraction: the record, or null when the model declines (extract.js). */
  extract(text, schema, options = {}) {
    return extract(this, text, schema, options);
  }

  /** Structured output: the value, held to `options.schema` by full-schema decoding (structured.js). */
  generate(text, options = {}) {
    return generate(this, text, options);
  }

  /** The OpenAI-compatible surface: `chat.completions.create({messages, tools, ...})` (openai.js). */
  get chat() {
    return (this.#chat ??= { completions: new Completions(this, this.#log) });
  }

  /** Clears the conversation state (KV cache). */
  reset() {
    return this.#inLane(() => this.#call(Req.RESET, {}));
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
   * Runs `fn` after the calls before it in the lane (each of them done or failed); at once when
   * none is pending, so a request is posted before anything that follows the call (a closed port).
   */
  #inLane(fn) {
    let run;
    if (this.#pendingInLane === 0) {
      try {
        run = Promise.resolve(fn());
      } catch (e) {
        run = Promise.reject(e);
      }
    } else run = this.#lane.then(fn);
    this.#pendingInLane += 1;
    const done = () => {
      this.#pendingInLane -= 1;
    };
    this.#lane = run.then(done, done);
    return run;
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
    return this.#inLane(() => this.#call(type, payload, options));
  }

  /** One request to the engine: a complete brings its prefix in first (`#complete`). */
  #call(type, payload, options) {
    return type === Req.COMPLETE
      ? this.#complete(payload, options)
      : this.#post(type, payload, options);
  }

  /**
   * A complete request: its system + tools prefix brought in first where a snapshot can be loaded
   * or kept (prepare.js), then the request; the result says where its prefix came from.
   */
  async #complete(payload, options = {}) {
    const { engine, request } = payload;
    let prefixMs = 0; // what bringing the prefix in took, part of this request's prefill
    if (this.#prefixes.enabled) {
      const { tools, system, date } = request;
      const t0 = performance.now();
      const step = await this.#prefixes
        .ensure({ tools, system, date, engine }, { signal: options.signal })
        .catch((e) => {
          if (e.name === 'AbortError') throw e;
          return {}; // anything else (tools the core cannot read) the request itself reports
        });
      if (['loaded', 'saved', 'prefilled'].includes(step.snapshot))
        prefixMs = performance.now() - t0;
    }
    const { prefix, ...r } = await this.#post(Req.COMPLETE, payload, options);
    const timings = { ...r.timings, prefill_ms: r.timings.prefill_ms + prefixMs };
    // A relayed engine (another Needle behind the host) has already said it.
    const snapshot = prefix ? this.#prefixes.resultField(prefix.from, prefix.key) : r.snapshot;
    return { ...r, timings, snapshot: snapshot ?? null };
  }

  /** Posts one request to the host and resolves to its reply. */
  #post(type, payload, { signal, onToken, onProgress, transfer } = {}) {
    if (this.#death) return Promise.reject(this.#death);
    if (this.#disposed)
      return Promise.reject(new NeedleError('disposed', 'this model was disposed'));
    if (signal && signal.aborted)
      return Promise.reject(new NeedleError('aborted', 'aborted before it started'));
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
    // A log line may outlive its request (backend 'auto' decides after the load: engine/auto.js).
    if (msg.type === Reply.LOG) {
      if (this.#log[msg.level]) this.#log[msg.level](msg.message);
      return;
    }
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

  /** The engine's worker is gone (crashed, killed, out of memory): this instance is disposed for good. */
  #die(why) {
    if (this.#disposed) return;
    this.#death = new NeedleError(
      'worker_died',
      `the engine's worker died (${why}); load the model again`,
    );
    this.dispose();
  }
}

/**
 * `{ source, size }`: a source with a model name put in its file URL's place (models.js), others
 * as they are; `size`, the bytes the Hub's listing gives that file (else null).
 */
async function named(source, options) {
  if (!isModelName(source)) return { source, size: null };
  // A relative host (a copy beside the page) resolves against the page, as URLs do.
  const host = resolveUrl(options.modelHost ?? modelHost());
  const { url, size } = await resolveModel(source, { ...options, modelHost: host });
  return { source: url, size };
}

/** The most a download may take: `maxBytes` (default 2 GiB), or less where the Hub lists less. */
function downloadCeiling(options, { size }) {
  return Math.min(maxBytesOption(options.maxBytes), size ?? Number.POSITIVE_INFINITY);
}

/** A caller's argument that could not be converted or posted, as a typed error. */
function asArgumentError(e) {
  return e instanceof NeedleError
    ? e
    : new NeedleError('invalid_argument', `cannot send this request: ${(e && e.message) || e}`);
}

/** A snapshot source: bytes as they are, a URL resolved against the page. */
function snapshotSource(src) {
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) return src;
  if (typeof src === 'string' || src instanceof URL) return resolveUrl(src);
  throw new NeedleError('invalid_argument', 'a snapshot is a URL, Uint8Array or ArrayBuffer');
}

/** An optional text argument: null when absent, else its string form. */
function optionalText(v) {
  return v === undefined || v === null ? null : String(v);
}

/**
 * A complete() call's payload: the engine options for this request, and the request object the
 * core parses (every option but this call's and the engine's; the core checks them all).
 */
function toRequest(query, o) {
  const { signal: _signal, onToken: _onToken, layers, kv, numerics, tools, ...rest } = o;
  const engine = {
    layers: layers === undefined || layers === null ? null : Number(layers),
    kv: optionalText(kv),
    numerics: optionalText(numerics),
  };
  return { engine, request: { ...rest, query: String(query), tools: toolsToJson(tools) } };
}

export default Needle;
