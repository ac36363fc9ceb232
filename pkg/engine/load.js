// The load job of the engine host: a model's bytes (engine/source.js) into a new engine of the
// build the options choose (engine/build.js; the gpu build where engine/backend.js allows it),
// timed for `info.load_ms`.
import { Reply, NeedleError } from '../protocol.js';
import { backendOption, declineGpu, modelMisfit, webgpuHere } from './backend.js';
import { GPU_BUILD, chooseBuild, loadBuild } from './build.js';
import { sessionCaller } from './call.js';
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
 * Builds a session for `source` under `options`: `{ session, call, config, base, requestOptions }`
 * (`call`: call.js's caller for the session's build; `base`: how it was loaded, for `info`;
 * `requestOptions`: the names a request may hold). `before()` runs once the bytes and the module
 * are in, just before the engine is built (the caller frees the old one there). `post` sends
 * progress and warnings; `spawnThreads(init, count)` has the client start the pool's threads.
 */
export async function loadSession(source, options, { post, signal, lent, before, spawnThreads }) {
  const want = backendOption(options.backend);
  const log = (level) => (message) => post({ type: Reply.LOG, level, message });
  const cpuBuild = () => loadBuild(chooseBuild(options), log('warn'), spawnThreads);
  // WebGPU's preconditions are checked, and the module compiles (its threads start), while the
  // model downloads.
  const gpu = want === 'cpu' ? Promise.resolve({ reason: null }) : webgpuHere();
  // A forced backend that cannot run refuses before the download.
  if (want === 'webgpu' && !(await gpu).adapter) declineGpu(want, (await gpu).reason);
  const wasm = gpu.then((g) => {
    if (g.adapter) return loadBuild(GPU_BUILD, log('warn'));
    if (want !== 'cpu') declineGpu(want, g.reason, log('info'));
    return cpuBuild();
  });
  wasm.catch(() => {}); // reported below, once the bytes are in
  const t0 = now();
  const src = await sourceBytes(source, options, post, signal, lent);
  const t1 = now();
  post({ type: Reply.PROGRESS, phase: 'init', loaded: 0, total: 1 });
  let build = await wasm;
  if (signal.aborted) throw new NeedleError('aborted', 'load aborted');
  before();
  const config = engineConfig(options);
  const construct = ({ glue }) => {
    glue.reserve(src.bytes.length);
    return new glue.Session(src.bytes, config.kv, config.numerics, config.layers, config.context);
  };
  let session = construct(build);
  let call = sessionCaller(build.variant, build.exports);
  let reason = (await gpu).reason;
  let deviceMs;
  if (build.variant === 'gpu') {
    let why;
    const t = now();
    try {
      why = await openDevice(session, call, (await gpu).limits, config);
      deviceMs = now() - t;
    } catch (e) {
      session.free();
      throw e;
    }
    if (why !== null) {
      session.free();
      reason = declineGpu(want, why, log('info'));
      build = await cpuBuild();
      session = construct(build);
      call = sessionCaller(build.variant, build.exports);
    }
  }
  await warmUp(session, call);
  post({ type: Reply.PROGRESS, phase: 'init', loaded: 1, total: 1 });
  const g = build.variant === 'gpu' ? await gpu : null;
  const onGpu = g ? session.gpu_info() : null;
  const base = {
    variant: build.variant,
    threads: build.threads,
    backend: onGpu ? onGpu.backend : 'cpu',
    adapter: g ? g.adapter : null,
    // Every buffer the forward pass holds on the GPU (weights as stored, activations, state).
    gpu_bytes: onGpu && onGpu.backend === 'webgpu' ? onGpu.gpu_bytes : null,
    backend_reason: reason ?? null,
    source: src.from,
    storage: src.storage ?? null,
    bytes: src.bytes.length,
    sha256: src.sha256,
    // `device`: the gpu build's adapter, device and probe kernel, within `init`.
    load_ms: { fetch: t1 - t0, init: now() - t1, ...(g ? { device: deviceMs } : {}) },
  };
  return {
    session,
    call,
    config,
    base,
    requestOptions: new Set(build.glue.requestOptions().map((o) => o.name)),
  };
}

/**
 * Opens the gpu build's device for `session` (adapter, device, a probe kernel's round trip, all
 * inside one suspending call): null once open, else why the model cannot run there.
 */
async function openDevice(session, call, limits, config) {
  const facts = { generation: session.info().generation, ...session.gpu_info() };
  const misfit = modelMisfit(facts, limits);
  if (misfit) return misfit;
  try {
    await call(session, 'open', config.kv, config.numerics, config.layers, config.context);
    return null;
  } catch (e) {
    if (e && ['gpu_unavailable', 'gpu_lost', 'unsupported'].includes(e.code)) return e.message;
    throw e;
  }
}

/**
 * Two one-token passes through a new session. V8 runs a wasm function's first calls as baseline
 * code and optimises it in the background once it is hot, so without them a fresh engine's first
 * prefill chunks ran 3-6x slower than later ones (shipped Needle 3 geometry, SIMD: 314 and 185 ms
 * for one token, then ~55), and an abort during a page's first prompt waited that long (issue
 * 43's bound is 250 ms). The cost moves from the first request to the load.
 */
async function warmUp(session, call) {
  const ids = session.encode('hello');
  for (let i = 0; i < 2 && ids.length > 0; i++) await call(session, 'logits', ids.subarray(0, 1));
}
