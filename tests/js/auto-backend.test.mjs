// Backend 'auto' as a measured choice (pkg/engine/auto.js, calibrate.js, storage/choices.js),
// through the client and the engine host's real queue (worker.js `between`), inline. Node has no
// WebGPU: the adapter is a fake, and the "GPU engine" a second session of the CPU build labelled
// as the GPU's, so a request moved to it really runs there. Calibration figures are injected
// (`measure`), so no outcome depends on timing, except where the real workload runs to show that
// it never runs inside a request.
import { test as nodeTest, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Needle } from '../../pkg/index.js';
import { NeedleError } from '../../pkg/protocol.js';
import { serve } from '../../pkg/worker.js';
import { provideInlineServe } from '../../pkg/host/index.js';
import { loadBuild } from '../../pkg/engine/build.js';
import { sessionCaller } from '../../pkg/engine/call.js';
import { choiceKey, memoryChoices, openChoices } from '../../pkg/storage/choices.js';
import { AutoBackend } from '../../pkg/engine/auto.js';
import { decide } from '../../pkg/engine/calibrate.js';
import { defaultModel, ROOT } from './helpers.mjs';

// A load that waited for the GPU engine, or a choice never made, fails instead of hanging.
const test = (name, fn) => nodeTest(name, { timeout: 60_000 }, fn);

const BYTES = readFileSync(defaultModel());
const SHA256 = createHash('sha256').update(BYTES).digest('hex');
// Choices are remembered per package version: the load names it by the core's, so a remembered
// choice found under this key also holds the two equal.
const VERSION = JSON.parse(readFileSync(join(ROOT, 'pkg/package.json'), 'utf8')).version;
const JSPI = { Suspending: function Suspending() {}, promising: () => {} };
const LIMITS = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30 };
const GPU = { vendor: 'acme', architecture: 'rdna-9', device: '', description: 'Acme Radeon 9' };
const QUERY = 'Turn on the kitchen lights';
const ASK = { tools: [], maxTokens: 8, temperature: 0 };

const envWith = (info) => ({
  navigator: { gpu: { requestAdapter: async () => ({ info, limits: LIMITS }) } },
  WebAssembly: JSPI,
});

// The engine host's test seams for the next load (worker.js serve `engine`).
let seams = {};
provideInlineServe((port) => serve(port, { engine: seams }));
beforeEach(() => {
  seams = {};
});

/**
 * A stand-in GPU engine: a session of the CPU build with the gpu build's info facts; `calls`
 * counts the session calls made through it, `freed` says whether it was freed.
 */
async function fakeGpu({ bytes, config }) {
  const build = await loadBuild({ variant: 'simd', threads: 1, forced: false });
  build.glue.reserve(bytes.length);
  const session = new build.glue.Session(bytes, JSON.stringify(config));
  const engine = { session, calls: 0, freed: false };
  const call = sessionCaller('simd', build.exports);
  engine.call = (...a) => (engine.calls++, call(...a));
  const free = session.free.bind(session);
  session.free = () => ((engine.freed = true), free());
  engine.base = { variant: 'gpu', threads: 1, backend: 'webgpu', adapter: GPU, gpu_bytes: 1 };
  return engine;
}

/** Figures as calibrate.js measureWorkload gives them, `ms` in all. */
const figure = (ms) => ({ prefill_ms: ms / 2, decode_ms: ms / 2, ms, tokens: 4 });

/** Seams with a hardware adapter whose GPU engine is `fakeGpu`, and figures `cpuMs`/`gpuMs`. */
function hardware({ cpuMs, gpuMs, choices = memoryChoices(), prepare } = {}) {
  const seen = { prepared: [], measured: [] };
  seams = {
    env: envWith(GPU),
    choices,
    prepareGpu: async (d) => {
      const engine = await (prepare ?? fakeGpu)(d);
      seen.prepared.push(engine);
      return engine;
    },
    measure: async (engine) => {
      const gpu = seen.prepared.includes(engine);
      seen.measured.push(gpu ? 'webgpu' : 'cpu');
      return figure(gpu ? gpuMs : cpuMs);
    },
  };
  return seen;
}

const load = (options = {}) => Needle.load(BYTES, { worker: false, ...options });

/** info once backend 'auto' has decided (or given up). */
async function decided(needle) {
  for (let i = 0; i < 1000; i++) {
    const info = await needle.refreshInfo();
    if (!['preparing', 'calibrating'].includes(info.backend_choice)) return info;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('backend auto never decided');
}

test("a software adapter is declined at load under 'auto', with the reason and a log line", async () => {
  for (const info of [
    { vendor: 'google', architecture: 'swiftshader', device: '', description: '' },
    { vendor: 'mesa', architecture: '', device: '', description: 'llvmpipe (LLVM 15)' },
    { ...GPU, isFallbackAdapter: true },
  ]) {
    let prepared = 0;
    seams = { env: envWith(info), prepareGpu: async () => (prepared++, new Promise(() => {})) };
    const logged = [];
    const logger = { info: (m) => logged.push(m), warn() {}, error() {}, debug() {} };
    const needle = await load({ logger, logLevel: 'info' });
    const i = needle.info;
    assert.equal(i.backend, 'cpu');
    assert.equal(i.backend_choice, 'declined');
    assert.match(i.backend_reason, /fallback|swiftshader|llvmpipe/);
    assert.ok(logged.some((m) => m.includes(i.backend_reason)), logged.join('\n'));
    assert.equal(prepared, 0, 'nothing is prepared on a software adapter');
    assert.ok((await needle.complete(QUERY, ASK)).tokens.length > 0);
    await needle.dispose();
  }
});

test('the first answer does not wait for a GPU engine that is still being prepared', async () => {
  const seen = hardware({ cpuMs: 10, gpuMs: 1, prepare: () => new Promise(() => {}) });
  const needle = await load();
  const first = await needle.complete(QUERY, ASK);
  assert.ok(first.tokens.length > 0);
  const info = await needle.refreshInfo();
  assert.equal(info.backend, 'cpu');
  assert.notEqual(info.variant, 'gpu');
  assert.equal(info.backend_choice, 'preparing');
  assert.match(info.backend_reason, /the CPU serves while WebGPU \(acme rdna-9\) is prepared/);
  assert.deepEqual(seen.measured, [], 'nothing calibrates before the GPU engine is ready');
  await needle.dispose();
});

test('the load never waits for the adapter: one found later is judged then', async () => {
  // An adapter request that never answers (a GPU process that hangs).
  seams = { env: { navigator: { gpu: { requestAdapter: () => new Promise(() => {}) } }, WebAssembly: JSPI } };
  const hung = await load();
  assert.ok((await hung.complete(QUERY, ASK)).tokens.length > 0);
  const waiting = await hung.refreshInfo();
  assert.equal(waiting.backend_choice, 'preparing');
  assert.match(waiting.backend_reason, /the CPU serves while WebGPU is looked for/);
  await hung.dispose();
  // A software adapter whose answer comes after the first answer: declined then.
  let answer;
  const adapter = new Promise((r) => {
    answer = r;
  });
  seams = { env: { navigator: { gpu: { requestAdapter: () => adapter } }, WebAssembly: JSPI } };
  const late = await load();
  assert.equal(late.info.backend_choice, 'preparing');
  assert.ok((await late.complete(QUERY, ASK)).tokens.length > 0);
  answer({ info: { vendor: 'google', architecture: 'swiftshader' }, limits: LIMITS });
  const info = await decided(late);
  assert.equal(info.backend_choice, 'declined');
  assert.match(info.backend_reason, /\(google swiftshader\) is .*a CPU implementation of WebGPU/);
  await late.dispose();
});

test('a GPU that calibrates faster gets the next requests, with the same answers', async () => {
  const choices = memoryChoices();
  const seen = hardware({ cpuMs: 20, gpuMs: 5, choices });
  const needle = await load();
  const onCpu = await needle.complete(QUERY, ASK);
  const info = await decided(needle);
  assert.equal(info.backend_choice, 'webgpu');
  assert.equal(info.backend, 'webgpu');
  assert.equal(info.variant, 'gpu');
  assert.deepEqual(info.adapter, GPU);
  assert.match(info.backend_reason, /WebGPU measured faster .*5\.0 ms.*20\.0 ms/);
  assert.deepEqual(info.calibration, { cpu: figure(20), webgpu: figure(5) });
  assert.deepEqual(seen.measured, ['cpu', 'webgpu', 'cpu', 'webgpu', 'cpu', 'webgpu']);
  const [gpu] = seen.prepared;
  const before = gpu.calls;
  const onGpu = await needle.complete(QUERY, ASK);
  assert.ok(gpu.calls > before, 'the request ran on the adopted engine');
  assert.deepEqual(onGpu.tokens, onCpu.tokens);
  assert.deepEqual(onGpu.function_calls, onCpu.function_calls);
  const kept = await choices.get(choiceKey(GPU, SHA256, VERSION));
  assert.equal(kept.backend, 'webgpu');
  assert.deepEqual(kept.figures, info.calibration);
  await needle.dispose();
});

test('a GPU that calibrates slower is not chosen, and its engine is freed', async () => {
  const choices = memoryChoices();
  const seen = hardware({ cpuMs: 5, gpuMs: 20, choices });
  const needle = await load();
  const info = await decided(needle);
  assert.equal(info.backend_choice, 'cpu');
  assert.equal(info.backend, 'cpu');
  assert.notEqual(info.variant, 'gpu');
  assert.match(info.backend_reason, /the CPU measured as fast or faster .*WebGPU 20\.0 ms, CPU 5\.0 ms/);
  assert.deepEqual(info.calibration, { cpu: figure(5), webgpu: figure(20) });
  const [gpu] = seen.prepared;
  assert.equal(gpu.freed, true);
  const calls = gpu.calls;
  assert.ok((await needle.complete(QUERY, ASK)).tokens.length > 0);
  assert.equal(gpu.calls, calls, 'requests stay on the CPU');
  assert.equal((await choices.get(choiceKey(GPU, SHA256, VERSION))).backend, 'cpu');
  await needle.dispose();
});

test('a remembered choice is reused without calibrating again', async () => {
  const choices = memoryChoices();
  hardware({ cpuMs: 20, gpuMs: 5, choices });
  const first = await load();
  const calibrated = await decided(first);
  await first.dispose();
  // The returning page: the same store, adapter, model and version.
  const seen = hardware({ cpuMs: 20, gpuMs: 5, choices });
  const again = await load();
  const info = await decided(again);
  assert.deepEqual(seen.measured, [], 'no calibration');
  assert.equal(info.backend, 'webgpu');
  assert.match(info.backend_reason, /^remembered: WebGPU measured faster/);
  assert.deepEqual(info.calibration, calibrated.calibration);
  await again.dispose();
  // A remembered CPU: no GPU engine is prepared at all.
  const cpuChoices = memoryChoices();
  await cpuChoices.put(choiceKey(GPU, SHA256, VERSION), {
    backend: 'cpu',
    reason: 'the CPU measured as fast or faster',
    figures: { cpu: figure(1), webgpu: figure(2) },
  });
  const onCpu = hardware({ cpuMs: 1, gpuMs: 2, choices: cpuChoices });
  const third = await load();
  const settled = await decided(third);
  assert.equal(settled.backend_choice, 'cpu');
  assert.match(settled.backend_reason, /^remembered: /);
  assert.deepEqual(onCpu.prepared, []);
  assert.deepEqual(onCpu.measured, []);
  await third.dispose();
});

test('a choice remembered under other load options is measured again', async () => {
  const choices = memoryChoices();
  hardware({ cpuMs: 20, gpuMs: 5, choices });
  await (await load().then(async (n) => (await decided(n), n))).dispose();
  // The same adapter, model and version, but tiled kernels and an f32 KV cache: its own verdict.
  const seen = hardware({ cpuMs: 5, gpuMs: 20, choices });
  const other = await load({ gpuKernels: 'tiled', kv: 'f32' });
  const info = await decided(other);
  assert.equal(seen.measured.length, 6, 'calibrated again');
  assert.equal(info.backend_choice, 'cpu');
  assert.doesNotMatch(info.backend_reason, /^remembered/);
  const key = choiceKey(GPU, SHA256, VERSION, { kv: 'f32', gpu_kernels: 'tiled' });
  assert.equal((await choices.get(key)).backend, 'cpu');
  assert.equal((await choices.get(choiceKey(GPU, SHA256, VERSION))).backend, 'webgpu');
  await other.dispose();
});

test('after a trap on the adopted engine, the rebuilt one chooses again: its info says where it runs', async () => {
  const choices = memoryChoices();
  const seen = hardware({ cpuMs: 20, gpuMs: 5, choices });
  const needle = await load();
  assert.equal((await decided(needle)).backend, 'webgpu');
  // A trap in the adopted engine (what a wasm RuntimeError from its instance is).
  const [gpu] = seen.prepared;
  const encode = gpu.session.encode.bind(gpu.session);
  gpu.session.encode = (text) => {
    if (text === 'trap') throw new WebAssembly.RuntimeError('unreachable');
    return encode(text);
  };
  assert.equal((await needle.tokenize('trap').catch((e) => e)).code, 'engine_trap');
  const info = await decided(needle);
  assert.equal(seen.prepared.length, 2, 'a new GPU engine, from the remembered choice');
  assert.equal(seen.measured.length, 6, 'no second calibration');
  assert.equal(info.backend, 'webgpu');
  assert.equal(info.variant, 'gpu');
  assert.match(info.backend_reason, /^remembered: /);
  const calls = seen.prepared[1].calls;
  assert.ok((await needle.complete(QUERY, ASK)).tokens.length > 0);
  assert.ok(seen.prepared[1].calls > calls, 'requests run where info says');
  await needle.dispose();
});

test('a device lost during the background preparation leaves the CPU serving, with the reason', async () => {
  const seen = hardware({
    cpuMs: 20,
    gpuMs: 5,
    prepare: async () => {
      throw new NeedleError('gpu_lost', 'the WebGPU device was lost (destroyed)');
    },
  });
  const logged = [];
  const logger = { info: (m) => logged.push(m), warn() {}, error() {}, debug() {} };
  const needle = await load({ logger, logLevel: 'info' });
  const info = await decided(needle);
  assert.equal(info.backend_choice, 'declined');
  assert.equal(info.backend, 'cpu');
  assert.match(info.backend_reason, /WebGPU was not used: the WebGPU device was lost/);
  assert.ok(logged.some((m) => /device was lost/.test(m)), logged.join('\n'));
  assert.deepEqual(seen.measured, []);
  assert.ok((await needle.complete(QUERY, ASK)).tokens.length > 0);
  await needle.dispose();
});

test('a GPU engine ready after the model is gone is freed, never measured or adopted', async () => {
  let called;
  const asked = new Promise((r) => {
    called = r;
  });
  let ready;
  const prepared = new Promise((r) => {
    ready = r;
  });
  const seen = { measured: 0, adopted: 0, freed: false };
  const auto = new AutoBackend({
    here: { adapter: GPU, limits: LIMITS },
    bytes: BYTES,
    sha256: SHA256,
    version: VERSION,
    prepare: () => (called(), prepared),
    measure: async () => (seen.measured++, figure(1)),
    choices: memoryChoices(),
    between: (job) => job(),
    cpu: () => ({}),
    adopt: () => seen.adopted++,
    log() {},
  });
  await asked;
  auto.stop(); // what the model's dispose, or a new load, does
  ready({ session: { free: () => (seen.freed = true) }, call: async () => {} });
  await auto.settled;
  assert.deepEqual(seen, { measured: 0, adopted: 0, freed: true });
  assert.equal(auto.info().backend_choice, 'preparing', 'no decision is reported');
});

test('a tie, or a calibration that gives no time, keeps the CPU', () => {
  assert.equal(decide(figure(5), figure(5)).backend, 'cpu');
  assert.equal(decide(figure(5), figure(4.9)).backend, 'webgpu');
  assert.throws(() => decide(figure(5), { ms: Number.NaN }), { code: 'internal', message: /WebGPU/ });
  assert.throws(() => decide(undefined, figure(5)), { code: 'internal', message: /CPU/ });
});

test('the calibration runs between requests: a request in flight keeps its engine and its answer', async () => {
  const long = { tools: [], maxTokens: 40, temperature: 0 };
  seams = {};
  const plain = await load({ backend: 'cpu' });
  const expected = await plain.complete(QUERY, long);
  await plain.dispose();
  // The GPU engine is ready at the request's first token; the real workload (measure not
  // injected) would reset the CPU engine under the request if it ran inside it.
  let ready;
  const prepared = new Promise((r) => {
    ready = r;
  });
  seams = { env: envWith(GPU), choices: memoryChoices(), prepareGpu: () => prepared };
  const needle = await load();
  let tokens = 0;
  const during = await needle.complete(QUERY, {
    ...long,
    onToken: () => {
      if (tokens++ === 0) fakeGpu({ bytes: BYTES, config: {} }).then(ready);
    },
  });
  assert.deepEqual(during.tokens, expected.tokens);
  const info = await decided(needle);
  assert.ok(['cpu', 'webgpu'].includes(info.backend_choice), info.backend_reason);
  for (const side of ['cpu', 'webgpu']) {
    const f = info.calibration[side];
    assert.ok(f.ms > 0 && f.prefill_ms > 0 && f.decode_ms > 0, JSON.stringify(f));
    assert.ok(f.tokens >= 1 && f.tokens <= 4, JSON.stringify(f));
  }
  assert.equal(info.calibration.cpu.tokens, info.calibration.webgpu.tokens, 'the same workload');
  const after = await needle.complete(QUERY, long);
  assert.deepEqual(after.tokens, expected.tokens);
  await needle.dispose();
});

/** An IDBRequest that settles on the next microtask with `value` (or fails with `error`). */
function request(value, error) {
  const r = {};
  queueMicrotask(() => {
    if (error) (r.error = error), r.onerror();
    else (r.result = value), r.onsuccess();
  });
  return r;
}

test('choices are kept in IndexedDB; one that fails to open or to run remembers nothing, never throws', async () => {
  const rows = new Map();
  const store = {
    get: (key) => request(rows.get(key)),
    put: (value, key) => request(rows.set(key, value) && key),
  };
  const working = { open: () => request({ transaction: () => ({ objectStore: () => store }) }) };
  const kept = await openChoices(working);
  await kept.put('k', { backend: 'cpu' });
  assert.deepEqual(await kept.get('k'), { backend: 'cpu' });
  assert.deepEqual(rows.get('k'), { backend: 'cpu' });
  // A database that cannot start a transaction (closed under it): no choice, no error.
  const closed = {
    open: () =>
      request({
        transaction: () => {
          throw new Error('The database connection is closing.');
        },
      }),
  };
  const broken = await openChoices(closed);
  assert.equal(await broken.get('k'), undefined);
  assert.equal(await broken.put('k', { backend: 'cpu' }), undefined);
  // One that refuses to open: this host's memory.
  const refused = await openChoices({ open: () => request(null, new Error('denied')) });
  await refused.put('m', { backend: 'webgpu' });
  assert.deepEqual(await refused.get('m'), { backend: 'webgpu' });
});
