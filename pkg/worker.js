// The engine host: owns the wasm module and one engine, answers protocol.js requests in order.
// Runs as a module Web Worker (started by index.js), or inline on the caller's thread through
// `serve(port)` where no Worker exists (Node). This file is the message loop; the jobs live in
// engine/: build.js (which wasm build, its threads), source.js and load.js (a model's bytes into
// an engine), model.js (the loaded model), generate.js (prefill and the decode loop), prefix.js
// (a system + tools prefix ahead of a request, and its snapshots).
import { Req, Reply, NeedleError, errorToWire } from './protocol.js';
import { inWorker } from './engine/build.js';
import { Model } from './engine/model.js';
import { checkRequest } from './engine/messages.js';

/**
 * Serves the protocol on `port` (anything with postMessage and an assignable onmessage: a worker
 * scope, a MessagePort, or an in-process pair). Registers the handler synchronously. `thread`:
 * what `info.thread` reports ('worker' | 'inline'); `engine`: the model's test seams
 * (engine/model.js `deps`).
 */
export function serve(port, { thread = inWorker ? 'worker' : 'inline', engine = {} } = {}) {
  const model = new Model(thread, { ...engine, between });
  const lentBytes = new Map(); // handle -> bytes an inline client lent for a load
  let nextLend = 1;
  let chain = Promise.resolve();
  const queued = new Set(); // ids received and not yet answered
  const aborted = new Set(); // those of them whose abort arrived (before or during their run)
  const loadAborts = new Map(); // id -> AbortController for an in-flight download
  const threadAnswers = new Map(); // load id -> its Req.THREADS answer's handler

  const send = (msg, transfer) => port.postMessage(msg, transfer || []);

  /**
   * Runs `job` in the chain, after the requests received so far: backend 'auto''s work on the
   * engines (engine/auto.js) goes between requests, never inside one, and a request that arrives
   * meanwhile waits for that one job only.
   */
  function between(job) {
    const done = chain.then(job);
    chain = done.catch(() => {});
    return done;
  }

  function takeLent(handle) {
    const bytes = lentBytes.get(handle);
    lentBytes.delete(handle);
    if (!bytes) throw new NeedleError('bad_source', 'lent bytes were already used');
    return bytes;
  }

  async function load(id, { source, options }) {
    const ctl = new AbortController();
    loadAborts.set(id, ctl);
    try {
      const post = (m) => send({ ...m, id });
      // The client starts the pool's threads (protocol.js Reply.THREADS).
      const spawnThreads = (init, count) =>
        new Promise((ok, fail) => {
          threadAnswers.set(id, (m) => (m.error ? fail(new Error(m.error)) : ok()));
          send({ type: Reply.THREADS, id, count, init });
        });
      const io = { post, signal: ctl.signal, lent: takeLent, spawnThreads };
      return await model.load(source, options, io);
    } finally {
      loadAborts.delete(id);
      threadAnswers.delete(id);
    }
  }

  const handlers = {
    [Req.LOAD]: load,
    [Req.COMPLETE]: (id, m) => model.complete(id, m, { send, aborted: () => aborted.has(id) }),
    [Req.PREFIX]: (_id, m) => model.prefix(m),
    [Req.PREPARE]: (id, m) =>
      model.prepare(m, { post: (r) => send({ ...r, id }), aborted: () => aborted.has(id) }),
    [Req.SNAPSHOT]: (_id, m) => model.loadSnapshot(m.bytes),
    [Req.RESET]: () => (model.need().reset(), model.forgetPrefix(), null),
    [Req.INFO]: () => model.info(),
    [Req.TOKENIZE]: (_id, m) => model.need().encode(m.text),
    [Req.DETOKENIZE]: (_id, m) => model.need().decode(model.tokenIds(m.ids)),
    [Req.RENDER]: (_id, m) => model.need().render(m.query, m.tools, m.system ?? undefined),
    [Req.LOGITS]: (_id, m) => model.logits(m.ids),
    [Req.DISPOSE]: () => {
      model.dispose();
      lentBytes.clear();
      return null;
    },
  };

  async function run(msg) {
    const id = msg?.id;
    try {
      if (aborted.has(id)) throw new NeedleError('aborted', 'aborted before it started');
      checkRequest(msg); // every field the handler reads has its type and size (issue 51)
      const value = await handlers[msg.type](id, msg);
      // Bytes made here (logits, a snapshot) move to the client rather than being copied.
      const made = ArrayBuffer.isView(value) ? value : value && value.bytes;
      const transfer = ArrayBuffer.isView(made) ? [made.buffer] : [];
      send({ type: Reply.RESULT, id, value }, transfer);
    } catch (e) {
      send({ type: Reply.ERROR, id: Number.isSafeInteger(id) ? id : null, error: errorToWire(e) });
      // The request that trapped has its answer; the next one waits for a new engine.
      if (e instanceof WebAssembly.RuntimeError) await model.recover(e.message);
    } finally {
      queued.delete(id);
      aborted.delete(id);
    }
  }

  port.onmessage = (event) => {
    const msg = event.data;
    if (msg?.type === Req.ABORT) {
      if (queued.has(msg.target)) aborted.add(msg.target); // a late abort for a finished request is moot
      const ctl = loadAborts.get(msg.target);
      if (ctl) ctl.abort();
      return;
    }
    if (msg?.type === Req.THREADS) {
      threadAnswers.get(msg.target)?.(msg);
      return;
    }
    queued.add(msg?.id);
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
// Only in a dedicated worker: a service worker imports this file for serve() (extension-sw.js).
if (
  typeof DedicatedWorkerGlobalScope !== 'undefined' &&
  globalThis instanceof DedicatedWorkerGlobalScope
) {
  serve(globalThis);
  holdLifeLock(globalThis);
}
