// The engine host's one model: its session (the wasm `Session`), how it was loaded, and the
// engine options it runs with now. Every request goes through `need()`, which refuses once the
// model is disposed, or once the engine trapped and no new one could be built (`recover`).
import { NeedleError, Reply } from '../protocol.js';
import { engineConfig, loadSession, prepareGpu } from './load.js';
import { AutoBackend } from './auto.js';
import { openChoices } from '../storage/choices.js';
import { generate } from './generate.js';
import { logTo } from './source.js';
import { evictRefused } from '../storage/model.js';
import { bringIn, loadGiven, prefixKey } from './prefix.js';

// Two engine configs (engineConfig's) ask for the same engine.
const sameConfig = (a, b) => Object.keys(engineConfig()).every((k) => a[k] === b[k]);

/** Token ids from the client, each checked to be a whole number below `vocab`. */
function tokenIds(ids, vocab) {
  for (const id of ids) {
    if (!(Number.isInteger(id) && id >= 0 && id < vocab)) {
      // Any value may come (a page's message): shown only as what it is when not a number.
      const shown = typeof id === 'number' ? id : `of type ${typeof id}`;
      throw new NeedleError(
        'token_out_of_vocab',
        `token id ${shown} is outside the vocabulary of ${vocab}`,
      );
    }
  }
  return Uint32Array.from(ids);
}

export class Model {
  #session = null;
  #call = null; // call.js's caller for the session's build
  #base = null; // how the model was loaded (info's variant, source, bytes, load_ms, ...)
  #loadConfig = engineConfig(); // the options Needle.load asked for
  #config = this.#loadConfig; // the options the engine is built with now (a request may override)
  #disposed = false;
  #crashed = null; // the trap that killed the engine, when no new one could be built
  // What the model was loaded from, for a new engine after a trap: `{ source, options }`.
  #origin = null;
  #thread;
  #requestOptions = new Set(); // the names the core reads from a request (session::OPTIONS)
  // The system + tools prefix the engine's prefix cache holds: { key, from: 'loaded' |
  // 'prefilled' | 'request' } (engine/prefix.js), or null when unknown.
  #held = null;
  #auto = null; // backend 'auto''s choice in the background (engine/auto.js), while it matters
  #deps;

  /**
   * `thread`: what `info.thread` reports ('worker' | 'inline'). `deps` (backend 'auto',
   * engine/auto.js): `between(job)` runs `job` while no request is in flight (the host's queue);
   * tests replace `env` (where WebGPU is looked for), `prepareGpu`, `measure` and `choices`.
   */
  constructor(thread, deps = {}) {
    this.#thread = thread;
    this.#deps = { between: (job) => job(), prepareGpu, ...deps };
  }

  need() {
    if (this.#disposed) throw new NeedleError('disposed', 'this model was disposed');
    if (this.#crashed) {
      throw new NeedleError(
        'engine_trap',
        `the engine stopped after a trap (${this.#crashed}); load the model again`,
      );
    }
    if (!this.#session) throw new NeedleError('disposed', 'no model is loaded');
    return this.#session;
  }

  info() {
    const s = this.need();
    const choice = this.#auto ? this.#auto.info() : {};
    return { ...s.info(), kv_bytes: s.kv_bytes(), thread: this.#thread, ...this.#base, ...choice };
  }

  /** Loads `source` in place of the current model (see engine/load.js). */
  async load(source, options, io) {
    let lentBytes = null; // bytes an inline client lent are taken once: kept to build again
    const lent = (handle) => (lentBytes = io.lent(handle));
    const loaded = await loadSession(source, options, {
      ...io,
      lent,
      before: () => this.#free(),
      env: this.#deps.env,
    }).catch(async (e) => {
      if (source.kind === 'url') await evictRefused(source.url, options.cache, e, logTo(io.post));
      throw e;
    });
    this.#install(loaded);
    if (loaded.auto) this.#auto = this.#tryGpu(loaded.auto, loaded.base.sha256, io.post);
    this.#base = loaded.base;
    this.#requestOptions = loaded.requestOptions;
    this.#crashed = null;
    this.#origin = {
      source: lentBytes ? { ...source, kind: 'bytes', bytes: lentBytes } : source,
      options,
    };
    return this.info();
  }

  /** Makes `loaded` (engine/load.js) the engine, with the load's options and no prefix held. */
  #install(loaded) {
    this.#session = loaded.session;
    this.#held = null;
    // Snapshots and their keys name the model by its SHA-256: the load's, where it took one.
    const hex = loaded.base.sha256;
    if (hex)
      this.#session.set_model_sha256(Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16)));
    this.#call = loaded.call;
    this.#loadConfig = this.#config = loaded.config;
  }

  /**
   * After a WebAssembly trap (`why`): the engine that trapped is dropped, its state unknown, and a
   * new one is built from the same source and options, held to the SHA-256 the load found (a URL
   * is read again through storage rather than a second copy of the model kept in memory). Only
   * when that fails do later requests refuse with `engine_trap`.
   */
  async recover(why) {
    this.#held = null;
    const alive = this.#session && !this.#disposed && this.#origin;
    try {
      this.#free();
    } catch {
      // The trapped call may have left it borrowed: its memory stays, the engine goes anyway.
      this.#session = null;
    }
    if (!alive) return;
    try {
      const { source, options } = this.#origin;
      const pinned = { ...options, integrity: this.#base.sha256 ?? options.integrity };
      const io = {
        post: () => {}, // no request waits on this build's progress
        signal: new AbortController().signal,
        lent: () => {
          throw new NeedleError('bad_source', 'lent bytes were already used');
        },
        before: () => {},
        // The threaded build's pool is up already (threads.js starts it once).
        spawnThreads: () => Promise.reject(new Error('the thread pool is already running')),
        env: this.#deps.env,
      };
      const loaded = await loadSession(source, pinned, io);
      this.#install(loaded);
      // The engine a load builds now: backend 'auto' chooses again (a remembered choice at once).
      this.#base = loaded.base;
      if (loaded.auto) this.#auto = this.#tryGpu(loaded.auto, loaded.base.sha256, io.post);
    } catch (e) {
      this.#crashed = `${why}; no new engine could be built: ${e.message}`;
    }
  }

  /** One request: the engine options it asks for (for this request only), then the generation. */
  async complete(id, { engine: e, request }, io) {
    const s = this.need();
    // The core refuses an unknown name too; this says which one.
    const unknown = Object.keys(request).find((k) => !this.#requestOptions.has(k));
    if (unknown !== undefined)
      throw new NeedleError('invalid_argument', `complete(): unknown option ${unknown}`);
    const want = this.#wanted(e);
    if (!sameConfig(want, this.#config)) {
      this.#held = null;
      await this.#call(s, 'reconfigure', JSON.stringify(want));
      this.#config = want;
    }
    const key = await prefixKey(s, request).catch(() => null);
    const from = key !== null && this.#held?.key === key ? this.#held.from : null;
    this.#held = null; // until the request has run
    const result = await generate(s, this.#call, id, request, io);
    this.#held = key === null ? null : { key, from: from ?? 'request' };
    return { ...result, prefix: { key, from } };
  }

  /**
   * `{ key, held }` of a system + tools prefix (protocol.js PREFIX); no key for a request that
   * runs other engine options (`engine`), which rebuild the engine.
   */
  async prefix(m) {
    const s = this.need();
    if (m.engine && !sameConfig(this.#wanted(m.engine), this.#config))
      return { key: null, held: null };
    const key = await prefixKey(s, m);
    return { key, held: key !== null && this.#held?.key === key ? this.#held.from : null };
  }

  /** Brings a system + tools prefix into the engine (protocol.js PREPARE, engine/prefix.js). */
  async prepare(m, io) {
    const s = this.need();
    if (m.key !== null && this.#held?.key === m.key)
      return { key: m.key, snapshot: 'held', tokens: null };
    this.#held = null;
    const r = await bringIn(s, m, m, io);
    this.#held = { key: m.key, from: r.snapshot };
    return { key: m.key, ...r };
  }

  /** Loads a snapshot given ahead of time as the engine's prefix (protocol.js SNAPSHOT). */
  async loadSnapshot(bytes) {
    this.#held = null;
    const r = await loadGiven(this.need(), bytes);
    this.#held = { key: r.key, from: 'loaded' };
    return r;
  }

  /** Anything else that runs the engine from a fresh state: no prefix is held after it. */
  forgetPrefix() {
    this.#held = null;
  }

  /** The engine options a request's `engine` part asks for (the load's where it names none). */
  #wanted(e) {
    return {
      ...this.#loadConfig,
      kv: e.kv ?? this.#loadConfig.kv,
      numerics: e.numerics ?? this.#loadConfig.numerics,
      layers: e.layers ?? this.#loadConfig.layers,
    };
  }

  /** Logits after each of the client's token `ids`, from a fresh state (no prefix held after). */
  logits(ids) {
    this.forgetPrefix();
    return this.#call(this.need(), 'logits', this.tokenIds(ids));
  }

  tokenIds(ids) {
    return tokenIds(ids, this.need().info().vocab);
  }

  dispose() {
    this.#free();
    this.#disposed = true;
  }

  /** Backend 'auto' on a hardware adapter: the GPU engine prepared, calibrated, maybe adopted. */
  #tryGpu({ here, bytes, version, config }, sha256, post) {
    const d = this.#deps;
    const log = (level, message) => post({ type: Reply.LOG, level, message });
    return new AutoBackend({
      here,
      bytes,
      sha256,
      version,
      config,
      prepare: (model, adapter) =>
        d.prepareGpu({
          here: adapter,
          bytes: model,
          config,
          between: d.between,
          warn: (m) => log('warn', m),
        }),
      ...(d.measure ? { measure: d.measure } : {}),
      choices: d.choices ?? openChoices(),
      between: d.between,
      // A calibration run leaves the CPU engine empty: no prefix is held after it.
      cpu: () => {
        this.#held = null;
        return { session: this.need(), call: this.#call };
      },
      adopt: (engine) => this.#adopt(engine),
      log,
    });
  }

  /**
   * Requests move to `engine` (the GPU's, engine/auto.js; called between requests): the CPU
   * engine goes, and with it any prefix it held (the next request prefills it on the GPU).
   */
  #adopt(engine) {
    this.#session.free();
    this.#install({ ...engine, config: this.#loadConfig, base: this.#base });
    this.#base = { ...this.#base, ...engine.base };
  }

  #free() {
    if (this.#auto) this.#auto.stop();
    this.#auto = null;
    if (this.#session) this.#session.free();
    this.#session = null;
  }
}
