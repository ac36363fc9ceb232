// The load job of the engine host: a model's bytes (engine/source.js) into a new engine of the
// build the options choose (engine/build.js), timed for `info.load_ms`.
import { Reply, NeedleError } from '../protocol.js';
import { chooseBuild, loadBuild } from './build.js';
import { sourceBytes } from './source.js';
import { now } from './generate.js';

/** The engine options a session is built with (`context`: the session's capacity). */
export function engineConfig(o = {}) {
  return {
    kv: o.kv ?? undefined,
    numerics: o.numerics ?? undefined,
    layers: o.layers ?? undefined,
    context: o.context ?? undefined,
  };
}

/**
 * Builds a session for `source` under `options`: `{ session, config, base, requestOptions }`
 * (`base`: how it was loaded, for `info`; `requestOptions`: the names a request may hold). `before()` runs once the bytes and the module are in, just before the
 * engine is built (the caller frees the old one there). `post` sends progress and warnings;
 * `spawnThreads(init, count)` has the client start the pool's threads.
 */
export async function loadSession(source, options, { post, signal, lent, before, spawnThreads }) {
  const choice = chooseBuild(options);
  // The module compiles (and its threads start) while the model downloads.
  const warn = (message) => post({ type: Reply.LOG, level: 'warn', message });
  const wasm = loadBuild(choice, warn, spawnThreads);
  wasm.catch(() => {}); // reported below, once the bytes are in
  const t0 = now();
  const src = await sourceBytes(source, options, post, signal, lent);
  const t1 = now();
  post({ type: Reply.PROGRESS, phase: 'init', loaded: 0, total: 1 });
  const { variant, glue, threads } = await wasm;
  if (signal.aborted) throw new NeedleError('aborted', 'load aborted');
  before();
  const config = engineConfig(options);
  glue.reserve(src.bytes.length);
  const session = new glue.Session(
    src.bytes,
    config.kv,
    config.numerics,
    config.layers,
    config.context,
  );
  post({ type: Reply.PROGRESS, phase: 'init', loaded: 1, total: 1 });
  const base = {
    variant,
    threads,
    source: src.from,
    storage: src.storage ?? null,
    bytes: src.bytes.length,
    sha256: src.sha256,
    load_ms: { fetch: t1 - t0, init: now() - t1 },
  };
  return {
    session,
    config,
    base,
    requestOptions: new Set(glue.requestOptions().map((o) => o.name)),
  };
}
