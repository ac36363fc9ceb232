// The engine host: owns the wasm module and one engine, answers protocol.js requests in order.
// Runs as a module Web Worker (started by index.js), or inline on the caller's thread through
// `serve(port)` where no Worker exists (Node).
import { Req, Reply, NeedleError, errorToWire } from './protocol.js';
import { fetchModel, integrityHex } from './storage/model.js';
import { sha256Hex } from './storage/sha256.js';
// Static imports (not `import()`), so the worker is one chunk: Vite's default worker format (iife)
// cannot split code, and every bundler then sees both glue files.
import * as threadedGlue from './wasm/threaded/needle.js';
import * as simdGlue from './wasm/simd/needle.js';
import * as baselineGlue from './wasm/baseline/needle.js';
import { AUTO_MAX_THREADS, startThreads, threadSupport } from './threads.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
const inWorker = typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;
const nodeImport = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

// The smallest module that uses a SIMD128 instruction (i8x16.splat, i8x16.popcnt): an engine
// that validates it runs the SIMD build.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const wasmModules = new Map(); // variant -> initialised glue namespace (one instance per thread)

const GLUES = { threaded: threadedGlue, simd: simdGlue, baseline: baselineGlue };

async function loadWasm(variant) {
  if (wasmModules.has(variant)) return wasmModules.get(variant);
  try {
    const glue = GLUES[variant];
    // Literal `new URL(..., import.meta.url)` per file: the pattern bundlers rewrite to an asset.
    const wasmUrl =
      variant === 'threaded'
        ? new URL('./wasm/threaded/needle_bg.wasm', import.meta.url)
        : variant === 'simd'
          ? new URL('./wasm/simd/needle_bg.wasm', import.meta.url)
          : new URL('./wasm/baseline/needle_bg.wasm', import.meta.url);
    if (isNode && wasmUrl.protocol === 'file:') {
      const { readFile } = await nodeImport('node:fs/promises');
      await glue.default({ module_or_path: await readFile(wasmUrl) });
    } else {
      await glue.default({ module_or_path: wasmUrl });
    }
    wasmModules.set(variant, glue);
    return glue;
  } catch (e) {
    throw new NeedleError('wasm_failed', `cannot load the ${variant} WebAssembly module: ${e.message}`);
  }
}

/**
 * The build a load runs and its threads, from the `simd` and `threads` options: the threaded build
 * where threads are allowed here (a Web Worker on a cross-origin isolated page, SIMD128, 2+ cores
 * for 'auto'), else the SIMD128 build, else the baseline. `forced`: a thread count was asked for,
 * so failing to start the threads is an error rather than a fall-back.
 */
export function chooseBuild({ simd: wantSimd, threads: want = 'auto' } = {}) {
  const simd = wantSimd !== false && simdSupported();
  if (wantSimd === true && !simd) throw new NeedleError('unsupported', 'this engine has no WebAssembly SIMD128');
  const single = { variant: simd ? 'simd' : 'baseline', threads: 1, forced: false };
  if (want === false || want === null) return single;
  const support = threadSupport(inWorker);
  if (want === 'auto') {
    if (!support.ok || !simd || support.cores < 2) return single;
    return { variant: 'threaded', threads: Math.min(support.cores, AUTO_MAX_THREADS), forced: false };
  }
  if (!(Number.isInteger(want) && want >= 1 && want <= 256)) {
    throw new NeedleError('invalid_argument', `threads must be 'auto', false or a whole number from 1 to 256, not ${want}`);
  }
  if (!support.ok) throw new NeedleError('unsupported', support.why);
  if (!simd) throw new NeedleError('unsupported', 'the threaded build needs WebAssembly SIMD128');
  return { variant: 'threaded', threads: want, forced: true };
}

/** The initialised glue of `choice`'s build, its threads started: `{ variant, glue, threads }`. */
async function loadBuild(choice, warn) {
  if (choice.variant !== 'threaded') return { variant: choice.variant, glue: await loadWasm(choice.variant), threads: 1 };
  try {
    const glue = await loadWasm('threaded');
    await startThreads(glue, choice.threads);
    return { variant: 'threaded', glue, threads: glue.poolThreads() };
  } catch (e) {
    if (choice.forced) throw e instanceof NeedleError ? e : new NeedleError('unsupported', `the threads could not start: ${e.message}`);
    warn(`the threads could not start (${e.message}); the engine runs on one thread`);
    return { variant: 'simd', glue: await loadWasm('simd'), threads: 1 };
  }
}

// Yields to the event loop so a queued `abort` message is handled between two tokens. A
// MessageChannel round trip is a task without setTimeout's 4 ms clamp.
const yieldNow = (() => {
  if (typeof setImmediate === 'function') return () => new Promise((r) => setImmediate(r));
  if (typeof MessageChannel === 'function') {
    const ch = new MessageChannel();
    const waiting = [];
    ch.port1.onmessage = () => waiting.shift()();
    return () =>
      new Promise((r) => {
        waiting.push(r);
        ch.port2.postMessage(0);
      });
  }
  return () => new Promise((r) => setTimeout(r, 0));
})();

const now = () => (globalThis.performance ? performance.now() : Date.now());

/** The load options the engine is built with; a request may ask for others (then it is rebuilt). */
function engineConfig(o = {}) {
  return {
    kv: o.kv ?? undefined,
    numerics: o.numerics ?? undefined,
    layers: o.layers ?? undefined,
    context: o.context ?? undefined,
  };
}
const sameConfig = (a, b) => a.kv === b.kv && a.numerics === b.numerics && a.layers === b.layers && a.context === b.context;

/**
 * Turns a load source from the client into bytes: `{ bytes, sha256, from, storage }`. `lent` takes
 * bytes an inline client handed over by reference. Every source is held to `integrity`.
 */
async function sourceBytes(source, options, post, signal, lent) {
  const onProgress = (p) => post({ type: Reply.PROGRESS, ...p });
  if (source.kind === 'url') {
    // Warnings (storage refused, a full quota) and resumes go to the client's logger.
    const log = Object.fromEntries(['error', 'warn', 'info', 'debug'].map((level) => [level, (message) => post({ type: Reply.LOG, level, message })]));
    return fetched(source.url, { integrity: options.integrity, cache: options.cache, fetch: options.fetch, onProgress, signal, log });
  }
  if (source.kind === 'lent') source = { ...source, kind: 'bytes', bytes: lent(source.handle) };
  let src;
  // The client already fetched (and checked) it with its own `fetch` function or store.
  if (source.kind === 'bytes' && source.from) return { bytes: source.bytes, sha256: source.sha256 ?? null, from: source.from, storage: source.storage };
  if (source.kind === 'bytes') src = { bytes: source.bytes, from: 'bytes' };
  else if (source.kind === 'blob') {
    const bytes = new Uint8Array(await source.blob.arrayBuffer());
    onProgress({ phase: 'read', loaded: bytes.length, total: bytes.length });
    src = { bytes, from: 'blob' };
  } else throw new NeedleError('bad_source', `unknown source kind ${source.kind}`);
  const want = integrityHex(options.integrity);
  const sha256 = want ? await sha256Hex(src.bytes) : null;
  if (want && sha256 !== want) throw new NeedleError('integrity', `the ${src.from} source: expected sha256 ${want}, got sha256 ${sha256}`);
  return { ...src, sha256 };
}

/** A URL's bytes; a transfer that fails mid-way (a cut body, a bad encoding) is `fetch_failed`. */
async function fetched(url, options) {
  try {
    return await fetchModel(url, options);
  } catch (e) {
    if (e instanceof NeedleError || (e && e.name === 'AbortError')) throw e;
    throw new NeedleError('fetch_failed', `cannot read ${url}: ${(e && e.message) || e}`);
  }
}

/** Token ids from the client, each checked to be a whole number below `vocab`. */
function tokenIds(ids, vocab) {
  for (const id of ids) {
    if (!(Number.isInteger(id) && id >= 0 && id < vocab)) {
      throw new NeedleError('token_out_of_vocab', `token id ${id} is outside the vocabulary of ${vocab}`);
    }
  }
  return Uint32Array.from(ids);
}

/**
 * Serves the protocol on `port` (anything with postMessage and an assignable onmessage: a worker
 * scope, a MessagePort, or an in-process pair). Registers the handler synchronously. `thread`:
 * what `info.thread` reports ('worker' | 'inline').
 */
export function serve(port, { thread = inWorker ? 'worker' : 'inline' } = {}) {
  let session = null;
  let loaded = null; // how the current model was loaded: { base: { variant, source, bytes, ... } }
  let loadConfig = engineConfig(); // the options Needle.load asked for
  let config = loadConfig; // the options the engine is built with now (a request may override)
  let disposed = false;
  let crashed = null; // the trap that killed the engine
  const lentBytes = new Map(); // handle -> bytes an inline client lent for a load
  let nextLend = 1;
  let chain = Promise.resolve();
  const queued = new Set(); // ids received and not yet answered
  const aborted = new Set(); // those of them whose abort arrived (before or during their run)
  const loadAborts = new Map(); // id -> AbortController for an in-flight download

  const send = (msg, transfer) => port.postMessage(msg, transfer || []);
  const fail = (id, e) => send({ type: Reply.ERROR, id, error: errorToWire(e) });

  function need() {
    if (disposed) throw new NeedleError('disposed', 'this model was disposed');
    if (crashed) throw new NeedleError('engine_trap', `the engine stopped after a trap (${crashed}); load the model again`);
    if (!session) throw new NeedleError('disposed', 'no model is loaded');
    return session;
  }

  function info() {
    const s = need();
    return { ...s.info(), kv_bytes: s.kv_bytes(), ...loaded.base };
  }

  function vocab() {
    return need().info().vocab;
  }

  function takeLent(handle) {
    const bytes = lentBytes.get(handle);
    lentBytes.delete(handle);
    if (!bytes) throw new NeedleError('bad_source', 'lent bytes were already used');
    return bytes;
  }

  function reconfigure(want) {
    if (sameConfig(want, config)) return;
    need().reconfigure(want.kv, want.numerics, want.layers, want.context);
    config = want;
  }

  async function load(id, { source, options }) {
    const ctl = new AbortController();
    loadAborts.set(id, ctl);
    try {
      const post = (m) => send({ ...m, id });
      const choice = chooseBuild(options);
      // The module compiles (and its threads start) while the model downloads.
      const wasm = loadBuild(choice, (message) => post({ type: Reply.LOG, level: 'warn', message }));
      wasm.catch(() => {}); // reported below, once the bytes are in
      const t0 = now();
      const src = await sourceBytes(source, options, post, ctl.signal, takeLent);
      const t1 = now();
      post({ type: Reply.PROGRESS, phase: 'init', loaded: 0, total: 1 });
      const { variant, glue, threads } = await wasm;
      if (ctl.signal.aborted) throw new NeedleError('aborted', 'load aborted');
      if (session) session.free();
      session = null;
      const want = engineConfig(options);
      glue.reserve(src.bytes.length);
      session = new glue.Session(src.bytes, want.kv, want.numerics, want.layers, want.context);
      loadConfig = config = want;
      post({ type: Reply.PROGRESS, phase: 'init', loaded: 1, total: 1 });
      const t2 = now();
      loaded = {
        base: {
          thread,
          variant,
          threads,
          source: src.from,
          storage: src.storage ?? null,
          bytes: src.bytes.length,
          sha256: src.sha256,
          load_ms: { fetch: t1 - t0, init: t2 - t1 },
        },
      };
      return info();
    } finally {
      loadAborts.delete(id);
    }
  }

  async function complete(id, { request: r }) {
    const s = need();
    // Per-request engine options hold for this request only.
    reconfigure({
      ...loadConfig,
      kv: r.kv ?? loadConfig.kv,
      numerics: r.numerics ?? loadConfig.numerics,
      layers: r.layers ?? loadConfig.layers,
    });
    const t0 = now();
    // `turns` travel to the core as JSON text; the state keeps whatever prefix the new prompt shares.
    const turns = r.turns ? JSON.stringify(r.turns) : undefined;
    s.start(r.query, r.tools, r.system ?? undefined, r.maxTokens, r.temperature, r.seed, r.topK, r.topP, r.constrained, r.extractive, r.valueSearch, turns, r.date ?? undefined, r.requireCall, r.allowControlTokens, r.fullSchema);
    const prefillMs = now() - t0;
    let decodeMs = 0;
    let wasAborted = false;
    for (;;) {
      await yieldNow(); // lets an `abort` for this request arrive
      if (aborted.has(id)) {
        s.abort();
        wasAborted = true;
        break;
      }
      const t = now();
      const tok = s.next();
      decodeMs += now() - t;
      if (tok === undefined || tok === null) break;
      send({ type: Reply.TOKEN, id, token: tok.id, text: tok.text });
    }
    const t = now();
    // The core's envelope, the same JSON `needle run --json` prints.
    const c = JSON.parse(s.finish());
    decodeMs += now() - t;
    const result = {
      function_calls: c.function_calls,
      reasoning: c.reasoning ?? null,
      confidence: c.confidence ?? null,
      text: c.text,
      stop_reason: c.stop_reason,
      usage: c.usage,
      timings: {
        prefill_ms: prefillMs,
        decode_ms: decodeMs,
        tokens_per_s: decodeMs > 0 ? (c.tokens.length * 1000) / decodeMs : 0,
      },
      type: c.type,
      validation: c.validation,
      parse_error: c.parse_error ?? null,
      tokens: c.tokens,
      kv_bytes: s.kv_bytes(),
    };
    // An abort that arrived after the model had already stopped changes nothing.
    if (wasAborted && c.stop_reason === 'aborted') throw new NeedleError('aborted', 'generation aborted', { result });
    return result;
  }

  const handlers = {
    [Req.LOAD]: load,
    [Req.COMPLETE]: complete,
    [Req.RESET]: () => (need().reset(), null),
    [Req.INFO]: () => info(),
    [Req.TOKENIZE]: (id, m) => need().encode(m.text),
    [Req.DETOKENIZE]: (id, m) => need().decode(tokenIds(m.ids, vocab())),
    [Req.RENDER]: (id, m) => need().render(m.query, m.tools, m.system ?? undefined),
    [Req.LOGITS]: (id, m) => need().logits(tokenIds(m.ids, vocab())),
    [Req.DISPOSE]: () => {
      if (session) session.free();
      session = null;
      disposed = true;
      lentBytes.clear();
      return null;
    },
  };

  async function run(msg) {
    const { id } = msg;
    try {
      if (aborted.has(id)) throw new NeedleError('aborted', 'aborted before it started');
      const handler = handlers[msg.type];
      if (!handler) throw new NeedleError('invalid_argument', `unknown request type ${msg.type}`);
      const value = await handler(id, msg);
      const transfer = ArrayBuffer.isView(value) ? [value.buffer] : [];
      send({ type: Reply.RESULT, id, value }, transfer);
    } catch (e) {
      // A wasm trap leaves the instance in an unknown state: drop the engine rather than reuse it.
      if (e instanceof WebAssembly.RuntimeError) {
        session = null;
        crashed = e.message;
      }
      fail(id, e);
    } finally {
      queued.delete(id);
      aborted.delete(id);
    }
  }

  port.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === Req.ABORT) {
      if (queued.has(msg.target)) aborted.add(msg.target); // a late abort for a finished request is moot
      const ctl = loadAborts.get(msg.target);
      if (ctl) ctl.abort();
      return;
    }
    queued.add(msg.id);
    chain = chain.then(() => run(msg));
  };

  /** For an inline client: hands `bytes` to the next load by reference (same thread, no copy). */
  const lend = (bytes) => {
    const handle = nextLend++;
    lentBytes.set(handle, bytes);
    return handle;
  };
  return { lend };
}

/**
 * A Web Worker host holds a Web Lock named after itself for its whole life and says so: the
 * client asks for the same lock and is granted it only once this worker is gone (host/index.js).
 */
function holdLifeLock(scope) {
  const locks = scope.navigator && scope.navigator.locks;
  if (!locks || !scope.name) return;
  locks.request(scope.name, () => {
    scope.postMessage({ type: Reply.ALIVE });
    return new Promise(() => {});
  });
}

// In a module worker, register at once: a handler set after a top-level await misses messages.
if (inWorker) {
  serve(globalThis);
  holdLifeLock(globalThis);
}
