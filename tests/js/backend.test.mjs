// The backend choice (pkg/engine/backend.js and its use in engine/load.js): 'auto' considers
// WebGPU only where navigator.gpu, JSPI and a hardware adapter exist (a software one is declined
// with the reason), a Needle 3 model's largest tensor fitting the adapter's bindings, else the
// CPU with the reason; 'webgpu' where it cannot run rejects with gpu_unavailable. The
// environments are fakes (Node has neither WebGPU nor JSPI); the real adapter is
// tests/e2e/webgpu.test.mjs's, the measured choice tests/js/auto-backend.test.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  backendOption,
  declineGpu,
  modelMisfit,
  softwareAdapter,
  webgpuHere,
} from '../../pkg/engine/backend.js';
import { Needle } from '../../pkg/index.js';
import { defaultModel } from './helpers.mjs';

const GIB = 2 ** 30;
const JSPI = { Suspending: function Suspending() {}, promising: () => {} };

/** A global scope whose navigator.gpu answers requestAdapter with `adapter` (or throws it). */
function scope(adapter, wasm = JSPI) {
  const requestAdapter = async () => {
    if (adapter instanceof Error) throw adapter;
    return adapter;
  };
  return { navigator: { gpu: { requestAdapter } }, WebAssembly: wasm };
}

const adapter = (limits) => ({
  info: { vendor: 'google', architecture: 'swiftshader', device: '', description: 'SwiftShader' },
  limits: { maxStorageBufferBindingSize: GIB, maxBufferSize: GIB, ...limits },
});

test('the backend option is auto, webgpu or cpu', () => {
  assert.equal(backendOption(undefined), 'auto');
  for (const v of ['auto', 'webgpu', 'cpu']) assert.equal(backendOption(v), v);
  assert.throws(() => backendOption('gpu'), { code: 'invalid_argument' });
});

test('no navigator.gpu, no JSPI, no adapter, a failing request: each is a reason', async () => {
  assert.match((await webgpuHere({ navigator: {}, WebAssembly: JSPI })).reason, /navigator\.gpu/);
  assert.match((await webgpuHere({ WebAssembly: JSPI })).reason, /navigator\.gpu/);
  const noJspi = await webgpuHere(scope(adapter(), { promising: () => {} }));
  assert.match(noJspi.reason, /JSPI/);
  assert.equal(noJspi.adapter, undefined);
  assert.match((await webgpuHere(scope(null))).reason, /no WebGPU adapter/);
  assert.match((await webgpuHere(scope(new Error('blocked')))).reason, /blocked/);
});

test('an adapter is described with the limits the model is held to', async () => {
  const here = await webgpuHere(scope(adapter({ maxBufferSize: 256 * 2 ** 20 })));
  assert.equal(here.reason, undefined);
  assert.deepEqual(here.adapter, {
    vendor: 'google',
    architecture: 'swiftshader',
    device: '',
    description: 'SwiftShader',
  });
  assert.deepEqual(here.limits, { maxStorageBufferBindingSize: GIB, maxBufferSize: 256 * 2 ** 20 });
  assert.match(here.software, /swiftshader, a CPU implementation/i);
});

test('fallback adapters and CPU implementations of WebGPU are software; GPUs are not', () => {
  const named = (info) => ({ info: { vendor: '', architecture: '', device: '', description: '', ...info } });
  assert.match(softwareAdapter(named({ isFallbackAdapter: true })), /fallback/);
  // The older place of the flag (before GPUAdapterInfo had it).
  assert.match(softwareAdapter({ ...named({}), isFallbackAdapter: true }), /fallback/);
  assert.match(softwareAdapter(named({ architecture: 'swiftshader' })), /swiftshader/);
  assert.match(softwareAdapter(named({ description: 'llvmpipe (LLVM 15.0.6, 256 bits)' })), /llvmpipe/);
  assert.match(softwareAdapter(named({ device: 'Lavapipe' })), /Lavapipe/);
  assert.match(
    softwareAdapter(named({ vendor: 'microsoft', description: 'Microsoft Basic Render Driver' })),
    /Microsoft Basic Render/,
  );
  for (const gpu of [
    { vendor: 'apple', architecture: 'metal-3' },
    { vendor: 'nvidia', architecture: 'ada-lovelace', description: 'NVIDIA GeForce RTX 4070' },
    { vendor: 'intel', architecture: 'gen-12lp', isFallbackAdapter: false },
  ]) {
    assert.equal(softwareAdapter(named(gpu)), null, JSON.stringify(gpu));
  }
  assert.equal(softwareAdapter({}), null, 'no info: nothing names a CPU');
});

test('Needle 2, and a tensor larger than either limit, do not fit the GPU', () => {
  const limits = { maxStorageBufferBindingSize: 1000, maxBufferSize: 2000 };
  assert.equal(modelMisfit({ generation: 3, binding_bytes: 1000 }, limits), null);
  assert.match(modelMisfit({ generation: 2, binding_bytes: 10 }, limits), /Needle 2/);
  assert.match(modelMisfit({ generation: 3, binding_bytes: 1001 }, limits), /at most 1000 bytes/);
  const tinyBuffer = { maxStorageBufferBindingSize: 5000, maxBufferSize: 999 };
  assert.match(modelMisfit({ generation: 3, binding_bytes: 1000 }, tinyBuffer), /at most 999/);
  assert.match(modelMisfit({ generation: 3 }, limits), /needs undefined/);
});

test("'auto' logs the reason and goes on; 'webgpu' rejects with gpu_unavailable", () => {
  const logged = [];
  assert.equal(declineGpu('auto', 'no WebGPU adapter', (m) => logged.push(m)), 'no WebGPU adapter');
  assert.deepEqual(logged, ["backend 'auto' runs on the CPU: no WebGPU adapter"]);
  assert.throws(() => declineGpu('webgpu', 'no WebGPU adapter', () => {}), {
    code: 'gpu_unavailable',
    message: /no WebGPU adapter/,
  });
});

test('a load here (no WebGPU) runs on the CPU for auto and refuses a forced webgpu', async () => {
  const bytes = readFileSync(defaultModel());
  const logged = [];
  const logger = { info: (m) => logged.push(m), warn: () => {}, error: () => {}, debug: () => {} };
  const needle = await Needle.load(bytes, { logger, logLevel: 'info' });
  try {
    const info = needle.info;
    assert.equal(info.backend, 'cpu');
    assert.notEqual(info.variant, 'gpu');
    assert.equal(info.adapter, null);
    assert.match(info.backend_reason, /navigator\.gpu/);
    assert.ok(logged.some((m) => /backend 'auto' runs on the CPU/.test(m)), logged.join('\n'));
  } finally {
    await needle.dispose();
  }
  const cpu = await Needle.load(bytes, { backend: 'cpu' });
  assert.equal(cpu.info.backend_reason, null);
  await cpu.dispose();
  await assert.rejects(Needle.load(bytes, { backend: 'webgpu' }), { code: 'gpu_unavailable' });
  await assert.rejects(Needle.load(bytes, { backend: 'metal' }), { code: 'invalid_argument' });
});
