// The load job of the engine host: a model's bytes (engine/source.js) into a new engine of the
// build the options choose (engine/build.js: a CPU build, or the gpu build for backend 'webgpu'),
// timed for `info.load_ms`; and backend 'auto''s GPU engine, built later (engine/auto.js).
import { Reply, NeedleError } from '../protocol.js';
import { backendOption, declineGpu, modelMisfit, webgpuHere } from './backend.js';
import { GPU_BUILD, chooseBuild, loadBuild } from './build.js';
import { sessionCaller } from './call.js';
import { sourceBytes } from './source.js';
import { now } from './generate.js';

/**
 * The engine options a session is built with: the load options the core reads
 * (src/session/load_options.rs LOAD_OPTIONS; `context`: the session's capacity), handed to it as
 * one JSON object (undefined ones left out: the core's defaults).
 */
export function engineConfig(o = {}) {
  return {
    kv: o.kv ?? undefined,
    numerics: o.numerics ?? undefined,
    layers: o.layers ?? undefined,
    context: o.context ?? undefined,
    gpu_kernels: o.gpu_kernels ?? undefined,
  };
}

/**
 * Builds a session for `source` under `options`: `{ session, call, config, base, requestOptions,
 * auto }` (`call`: call.js's caller for the session's build; `base`: how it was loaded, for
 * `info`; `requestOptions`: the names a request may hold; `auto`: for backend 'auto' on a hardware
 * adapter, what engine/auto.js needs to try the GPU after the load, else null). `before()` runs
 * once the bytes and the module are in, just before the engine is built (the caller frees the old
 * one there). `post` sends progress and warnings; `spawnThreads(init, count)` has the client
 * start the pool's threads; `env`: the global scope WebGPU is looked for in.
 */
export async function loadSession(
  source,
  options,
  { post, signal, lent, before, spawnThreads, env },
) {
  const want = backendOption(options.backend);
  refuseSubgroups(options);
  const log = (level) => (message) => post({ type: Reply.LOG, level, message });
  // WebGPU's preconditions are checked, and the module compiles (its threads start), while the
  // model downloads.
  const gpu = want === 'cpu' ? Promise.resolve({ reason: null }) : webgpuHere(env);
  // A forced backend that cannot run refuses before the download.
  if (want === 'webgpu' && !(await gpu).adapter) declineGpu(want, (await gpu).reason);
  // 'auto' answers from a CPU build at once; a GPU waits for engine/auto.js, after the load.
  const wasm =
    want === 'webgpu'
      ? loadBuild(GPU_BUILD, log('warn'))
      : loadBuild(chooseBuild(options), log('warn'), spawnThreads);
  wasm.catch(() => {}); // reported below, once the bytes are in
  const t0 = now();
  const src = await sourceBytes(source, options, post, signal, lent);
  const t1 = now();
  post({ type: Reply.PROGRESS, phase: 'init', loaded: 0, total: 1 });
  const build = await wasm;
  if (signal.aborted) throw new NeedleError('aborted', 'load aborted');
  before();
  const config = engineConfig(options);
  const session = construct(build.glue, src.bytes, config);
  const call = sessionCaller(build.variant, build.exports);
  let deviceMs;
  if (want === 'webgpu') {
    const t = now();
    try {
      const why = await openDevice(session, call, (await gpu).limits, config);
      if (why !== null) declineGpu(want, why);
    } catch (e) {
      session.free();
      throw e;
    }
    deviceMs = now() - t;
  }
  await warmUp(session, call);
  post({ type: Reply.PROGRESS, phase: 'init', loaded: 1, total: 1 });
  // Under 'auto', no WebGPU or a software adapter is a reason now; a hardware adapter is tried
  // in the background, and so is an adapter not found yet: the load never waits for WebGPU.
  const g = want === 'cpu' ? null : await settledOr(gpu, null);
  const declined = want === 'auto' && g ? (g.reason ?? g.software) : null;
  if (declined) declineGpu(want, declined, log('info'));
  const base = {
    ...engineFacts(build, session, want === 'webgpu' ? g.adapter : null),
    backend_choice: want !== 'auto' ? null : declined ? 'declined' : 'preparing',
    backend_reason: declined,
    calibration: null,
    source: src.from,
    storage: src.storage ?? null,
    bytes: src.bytes.length,
    sha256: src.sha256,
    // `device`: the gpu build's adapter, device and probe kernel, within `init`.
    load_ms: {
      fetch: t1 - t0,
      init: now() - t1,
      ...(want === 'webgpu' ? { device: deviceMs } : {}),
    },
  };
  // `version`: the core's (Cargo.toml), which the package's version follows
  // (tests/js/auto-backend.test.mjs keys remembered choices by pkg/package.json's).
  const auto =
    want === 'auto' && !declined
      ? { here: g ?? gpu, bytes: src.bytes, version: build.glue.version(), config }
      : null;
  return {
    session,
    call,
    config,
    base,
    requestOptions: new Set(build.glue.requestOptions().map((o) => o.name)),
    auto,
  };
}

/**
 * The subgroup kernels, which no browser build can run, refused before the download whatever
 * the backend: wgpu's WebGPU backend does not map WebGPU's `subgroups` feature, so the gpu
 * build never offers them (src/gpu/README.md, Kernel variants). Other values are the core's to
 * check (`invalid_argument`).
 */
function refuseSubgroups(options) {
  if (options.gpu_kernels === 'subgroup')
    throw new NeedleError(
      'unsupported',
      "gpuKernels 'subgroup' cannot run in a browser: wgpu 30's WebGPU backend does not expose " +
        "WebGPU's subgroups feature ('tiled' is the same kernels with a workgroup reduction)",
    );
}

/** `promise`'s value if it has settled by now, else `pending`. */
async function settledOr(promise, pending) {
  const marker = {};
  const v = await Promise.race([promise, marker]);
  return v === marker ? pending : v;
}

/** A session of `glue`'s build over the container `bytes`, with the engine options `config`. */
function construct(glue, bytes, config) {
  glue.reserve(bytes.length);
  return new glue.Session(bytes, JSON.stringify(config));
}

/**
 * info's facts of the engine `session` of `build`, as the engine reports them (`adapter`: the
 * gpu build's, else null).
 */
function engineFacts(build, session, adapter) {
  const onGpu = build.variant === 'gpu' ? session.gpu_info() : null;
  return {
    variant: build.variant,
    threads: build.threads,
    backend: onGpu ? onGpu.backend : 'cpu',
    // The kernel variant the GPU engine loaded (src/gpu/README.md, Kernel variants); null on a CPU.
    gpu_kernels: onGpu && onGpu.backend === 'webgpu' ? onGpu.kernels : null,
    adapter,
    // Every buffer the forward pass holds on the GPU (weights as stored, activations, state).
    gpu_bytes: onGpu && onGpu.backend === 'webgpu' ? onGpu.gpu_bytes : null,
  };
}

/**
 * Backend 'auto''s GPU engine (engine/auto.js `prepare`), built while the CPU engine serves:
 * `{ session, call, base }` (`base`: its info facts), or a rejection saying why it cannot serve
 * (a misfit or a device that cannot open: `gpu_unavailable`; a lost one: `gpu_lost`). `here`:
 * backend.js webgpuHere's; the container is parsed `between` requests (it is synchronous).
 */
export async function prepareGpu({ here, bytes, config, between, warn }) {
  const build = await loadBuild(GPU_BUILD, warn);
  const call = sessionCaller(build.variant, build.exports);
  const session = await between(async () => construct(build.glue, bytes, config));
  try {
    const why = await openDevice(session, call, here.limits, config);
    if (why !== null) throw new NeedleError('gpu_unavailable', why);
    await warmUp(session, call);
  } catch (e) {
    session.free();
    throw e;
  }
  return { session, call, base: engineFacts(build, session, here.adapter) };
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
    await call(session, 'open', JSON.stringify(config));
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
