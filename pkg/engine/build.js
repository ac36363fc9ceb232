// Which of the wasm builds an engine runs (threaded, SIMD128, baseline; gpu where backend.js
// says so), loading its glue and starting the threaded build's pool: the `threads` job of the
// engine host (worker.js).
import { NeedleError } from '../protocol.js';
// Static imports (not `import()`), so the worker is one chunk: Vite's default worker format (iife)
// cannot split code, and every bundler then sees both glue files.
import * as threadedGlue from '../wasm/threaded/needle.js';
import * as simdGlue from '../wasm/simd/needle.js';
import * as baselineGlue from '../wasm/baseline/needle.js';
import * as gpuGlue from '../wasm/gpu/needle.js';
import { AUTO_MAX_THREADS, startThreads, threadSupport } from '../threads.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
export const inWorker =
  typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;
const nodeImport = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

// The smallest module that uses a SIMD128 instruction (i8x16.splat, i8x16.popcnt): an engine
// that validates it runs the SIMD build.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15,
  253, 98, 11,
]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const wasmModules = new Map(); // variant -> { glue, exports } (one instance per thread)

const GLUES = { threaded: threadedGlue, simd: simdGlue, baseline: baselineGlue, gpu: gpuGlue };

/** The build `backend: 'webgpu'` runs (backend.js decides when). */
export const GPU_BUILD = Object.freeze({ variant: 'gpu', threads: 1, forced: false });

async function loadWasm(variant) {
  if (wasmModules.has(variant)) return wasmModules.get(variant);
  try {
    const glue = GLUES[variant];
    // Literal `new URL(..., import.meta.url)` per file: the pattern bundlers rewrite to an asset.
    const wasmUrl =
      variant === 'threaded'
        ? new URL('../wasm/threaded/needle_bg.wasm', import.meta.url)
        : variant === 'simd'
          ? new URL('../wasm/simd/needle_bg.wasm', import.meta.url)
          : variant === 'gpu'
            ? new URL('../wasm/gpu/needle_bg.wasm', import.meta.url)
            : new URL('../wasm/baseline/needle_bg.wasm', import.meta.url);
    let exports;
    if (isNode && wasmUrl.protocol === 'file:') {
      const { readFile } = await nodeImport('node:fs/promises');
      exports = await glue.default({ module_or_path: await readFile(wasmUrl) });
    } else {
      exports = await glue.default({ module_or_path: wasmUrl });
    }
    const loaded = { glue, exports };
    wasmModules.set(variant, loaded);
    return loaded;
  } catch (e) {
    throw new NeedleError(
      'wasm_failed',
      `cannot load the ${variant} WebAssembly module: ${e.message}`,
    );
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
  if (wantSimd === true && !simd)
    throw new NeedleError('unsupported', 'this engine has no WebAssembly SIMD128');
  const single = { variant: simd ? 'simd' : 'baseline', threads: 1, forced: false };
  if (want === false || want === null) return single;
  const support = threadSupport(inWorker);
  if (want === 'auto') {
    if (!support.ok || !simd || support.cores < 2) return single;
    return {
      variant: 'threaded',
      threads: Math.min(support.cores, AUTO_MAX_THREADS),
      forced: false,
    };
  }
  if (!(Number.isInteger(want) && want >= 1 && want <= 256)) {
    throw new NeedleError(
      'invalid_argument',
      `threads must be 'auto', false or a whole number from 1 to 256, not ${want}`,
    );
  }
  if (!support.ok) throw new NeedleError('unsupported', support.why);
  if (!simd) throw new NeedleError('unsupported', 'the threaded build needs WebAssembly SIMD128');
  return { variant: 'threaded', threads: want, forced: true };
}

/**
 * The initialised glue of `choice`'s build, its threads started: `{ variant, glue, exports,
 * threads }` (`exports`: the instance's raw exports). `spawn(init, count)` starts the pool's
 * thread workers (threads.js startThreads).
 */
export async function loadBuild(choice, warn, spawn) {
  if (choice.variant !== 'threaded')
    return { variant: choice.variant, ...(await loadWasm(choice.variant)), threads: 1 };
  try {
    const { glue, exports } = await loadWasm('threaded');
    await startThreads(glue, choice.threads, spawn);
    return { variant: 'threaded', glue, exports, threads: glue.poolThreads() };
  } catch (e) {
    if (choice.forced)
      throw e instanceof NeedleError
        ? e
        : new NeedleError('unsupported', `the threads could not start: ${e.message}`);
    warn(`the threads could not start (${e.message}); the engine runs on one thread`);
    return { variant: 'simd', ...(await loadWasm('simd')), threads: 1 };
  }
}
