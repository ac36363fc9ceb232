// The engine host's one model: its session (the wasm `Session`), how it was loaded, and the
// engine options it runs with now. Every request goes through `need()`, which refuses once the
// model is disposed or the engine trapped.
import { NeedleError } from '../protocol.js';
import { engineConfig, loadSession } from './load.js';
import { generate } from './generate.js';

const sameConfig = (a, b) =>
  a.kv === b.kv && a.numerics === b.numerics && a.layers === b.layers && a.context === b.context;

/** Token ids from the client, each checked to be a whole number below `vocab`. */
function tokenIds(ids, vocab) {
  for (const id of ids) {
    if (!(Number.isInteger(id) && id >= 0 && id < vocab)) {
      throw new NeedleError(
        'token_out_of_vocab',
        `token id ${id} is outside the vocabulary of ${vocab}`,
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
  #crashed = null; // the trap that killed the engine
  #thread;
  #requestOptions = new Set(); // the names the core reads from a request (session::OPTIONS)

  /** `thread`: what `info.thread` reports ('worker' | 'inline'). */
  constructor(thread) {
    this.#thread = thread;
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
    return { ...s.info(), kv_bytes: s.kv_bytes(), thread: this.#thread, ...this.#base };
  }

  /** Loads `source` in place of the current model (see engine/load.js). */
  async load(source, options, io) {
    const loaded = await loadSession(source, options, { ...io, before: () => this.#free() });
    this.#session = loaded.session;
    this.#call = loaded.call;
    this.#loadConfig = this.#config = loaded.config;
    this.#base = loaded.base;
    this.#requestOptions = loaded.requestOptions;
    return this.info();
  }

  /** One request: the engine options it asks for (for this request only), then the generation. */
  async complete(id, { engine: e, request }, io) {
    const s = this.need();
    // The core refuses an unknown name too; this says which one.
    const unknown = Object.keys(request).find((k) => !this.#requestOptions.has(k));
    if (unknown !== undefined)
      throw new NeedleError('invalid_argument', `complete(): unknown option ${unknown}`);
    const want = {
      ...this.#loadConfig,
      kv: e.kv ?? this.#loadConfig.kv,
      numerics: e.numerics ?? this.#loadConfig.numerics,
      layers: e.layers ?? this.#loadConfig.layers,
    };
    if (!sameConfig(want, this.#config)) {
      await this.#call(s, 'reconfigure', want.kv, want.numerics, want.layers, want.context);
      this.#config = want;
    }
    return generate(s, this.#call, id, request, io);
  }

  /** Logits after each of the client's token `ids`, from a fresh state. */
  logits(ids) {
    return this.#call(this.need(), 'logits', this.tokenIds(ids));
  }

  tokenIds(ids) {
    return tokenIds(ids, this.need().info().vocab);
  }

  /** A wasm trap leaves the instance in an unknown state: the engine is dropped, not reused. */
  trapped(message) {
    this.#session = null;
    this.#crashed = message;
  }

  dispose() {
    this.#free();
    this.#disposed = true;
  }

  #free() {
    if (this.#session) this.#session.free();
    this.#session = null;
  }
}
