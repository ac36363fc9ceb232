// Which backend a load runs on: WebGPU (the `gpu` wasm variant) or the CPU builds (build.js).
// `backend: 'webgpu'` takes any adapter, or refuses with `gpu_unavailable`. `backend: 'auto'`
// answers from a CPU build at once and considers only a hardware adapter (navigator.gpu, JSPI, an
// adapter that is not a CPU implementation of WebGPU): engine/auto.js prepares and calibrates it
// in the background and moves requests to it only if it measured faster (engine/calibrate.js).
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

// WebGPU implementations that run on the CPU, as adapters name them (architecture, vendor,
// device or description): on them the GPU build runs the CPU's work through an emulator, 3-30x
// slower than the CPU builds (issue 48: SwiftShader in headless Chromium).
const SOFTWARE = /swiftshader|llvmpipe|lavapipe|microsoft basic render/i;

/** Why `adapter` is a software (CPU) implementation of WebGPU, or null for a hardware one. */
export function softwareAdapter(adapter) {
  const info = adapter.info || {};
  const name = [info.vendor, info.architecture].filter(Boolean).join(' ') || info.description;
  const which = name ? `the WebGPU adapter (${name})` : 'the WebGPU adapter';
  if (info.isFallbackAdapter === true || adapter.isFallbackAdapter === true)
    return `${which} is a fallback adapter, a CPU implementation of WebGPU`;
  const named = [info.architecture, info.vendor, info.device, info.description]
    .map((v) => String(v ?? '').match(SOFTWARE))
    .find(Boolean);
  return named ? `${which} is ${named[0]}, a CPU implementation of WebGPU` : null;
}

/**
 * What `env` (the global scope; tests pass fakes) offers for WebGPU before any model is read:
 * `{ adapter: { vendor, architecture, device, description }, limits, software }` (`software`:
 * why the adapter runs on the CPU, or null), or `{ reason }` why not.
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
    software: softwareAdapter(adapter),
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
 * the reason (`log`) and returns it, the CPU build serving.
 */
export function declineGpu(want, reason, log) {
  if (want === 'webgpu') throw new NeedleError('gpu_unavailable', `backend 'webgpu': ${reason}`);
  log(`backend 'auto' runs on the CPU: ${reason}`);
  return reason;
}
