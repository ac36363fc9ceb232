// Which backend a load runs on: WebGPU (the `gpu` wasm variant) or the CPU builds (build.js).
// `backend: 'auto'` takes WebGPU only where everything it needs is here (navigator.gpu, JSPI, an
// adapter, a Needle 3 model whose largest tensor fits one of the adapter's storage bindings) and
// otherwise runs on the CPU, logging why; `backend: 'webgpu'` refuses with `gpu_unavailable`.
import { NeedleError } from '../protocol.js';

export const BACKENDS = Object.freeze(['auto', 'webgpu', 'cpu']);

/** The `backend` load option, checked ('auto' when absent). */
export function backendOption(value) {
  const v = value ?? 'auto';
  if (!BACKENDS.includes(v))
    throw new NeedleError(
      'invalid_argument',
      `backend must be 'auto', 'webgpu' or 'cpu', not ${String(value)}`,
    );
  return v;
}

/**
 * What `env` (the global scope; tests pass fakes) offers for WebGPU before any model is read:
 * `{ adapter: { vendor, architecture, device, description }, limits }`, or `{ reason }` why not.
 */
export async function webgpuHere(env = globalThis) {
  const gpu = env.navigator && env.navigator.gpu;
  if (!gpu) return { reason: 'this engine has no WebGPU (navigator.gpu)' };
  const wasm = env.WebAssembly;
  if (!(wasm && typeof wasm.Suspending === 'function' && typeof wasm.promising === 'function'))
    return { reason: 'this engine has no JSPI (WebAssembly.Suspending, WebAssembly.promising)' };
  let adapter;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    return { reason: `requestAdapter failed: ${(e && e.message) || e}` };
  }
  if (!adapter) return { reason: 'no WebGPU adapter' };
  const info = adapter.info || {};
  return {
    adapter: {
      vendor: info.vendor || '',
      architecture: info.architecture || '',
      device: info.device || '',
      description: info.description || '',
    },
    limits: {
      maxStorageBufferBindingSize: Number(adapter.limits.maxStorageBufferBindingSize),
      maxBufferSize: Number(adapter.limits.maxBufferSize),
    },
  };
}

/**
 * Why the model cannot run on an adapter with `limits`, or null. `facts`: `{ generation,
 * binding_bytes }` (the gpu session's info: its largest tensor as the GPU holds it).
 */
export function modelMisfit(facts, limits) {
  if (facts.generation !== 3) return `Needle ${facts.generation} runs on the CPU only`;
  const most = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  if (!(facts.binding_bytes <= most))
    return `the adapter binds at most ${most} bytes, the model's largest tensor needs ${facts.binding_bytes}`;
  return null;
}

/**
 * The GPU cannot be used, for `reason`: `backend: 'webgpu'` throws `gpu_unavailable`; 'auto' logs
 * the reason (`log`) and returns it, the load going on with the CPU build.
 */
export function declineGpu(want, reason, log) {
  if (want === 'webgpu') throw new NeedleError('gpu_unavailable', `backend 'webgpu': ${reason}`);
  log(`backend 'auto' runs on the CPU: ${reason}`);
  return reason;
}
