// One load options object: the core's table (src/session/load_options.rs LOAD_OPTIONS) is the
// list; the engine host hands every option of it to the core as one object (engine/load.js
// engineConfig), index.d.ts LoadOptions declares each, the CLI's usage names its flag, and each
// reaches the engine. Adding a load option to one surface and not another fails here. The GPU
// kernels reach only the gpu build (tests/e2e/webgpu-parity.test.mjs runs each variant there);
// here: a CPU build takes and ignores them, 'subgroup' is refused, and backend 'auto' prepares
// its GPU engine with them.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Needle } from '../../pkg/index.js';
import { engineConfig } from '../../pkg/engine/load.js';
import { serve } from '../../pkg/worker.js';
import { provideInlineServe } from '../../pkg/host/index.js';
import { memoryChoices } from '../../pkg/storage/choices.js';
import * as glue from '../../pkg/wasm/simd/needle.js';
import { CLI, ROOT, defaultModel } from './helpers.mjs';

// Needle.load's spelling where it is not the core's (the package's option predates the table).
const PUBLIC = { context: 'maxContext', gpu_kernels: 'gpuKernels' };

// The engine host's test seams for an inline load (worker.js serve `engine`).
let seams = {};
provideInlineServe((port) => serve(port, { engine: seams }));

let core;
before(async () => {
  await glue.default({ module_or_path: readFileSync(join(ROOT, 'pkg/wasm/simd/needle_bg.wasm')) });
  core = glue.loadOptions();
});

const sorted = (names) => [...names].sort();

test('the engine host builds a session from exactly the core load options', () => {
  assert.ok(core.some((o) => o.name === 'context'), JSON.stringify(core));
  assert.deepEqual(sorted(Object.keys(engineConfig())), sorted(core.map((o) => o.name)));
});

test('index.d.ts LoadOptions declares every load option', () => {
  const dts = readFileSync(join(ROOT, 'pkg/index.d.ts'), 'utf8');
  const start = dts.indexOf('export interface LoadOptions');
  const body = dts.slice(dts.indexOf('{', start) + 1, dts.indexOf('\n}', start));
  const declared = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]);
  for (const { name } of core) assert.ok(declared.includes(PUBLIC[name] ?? name), name);
});

test("the CLI's usage names every load option's flag", () => {
  const help = execFileSync(CLI, ['help'], { encoding: 'utf8' });
  const run = help.split('\n').find((l) => l.trim().startsWith('run '));
  for (const { name, flag } of core) assert.ok(run.includes(flag), `needle run: no ${flag} (${name})`);
});

test('every load option reaches the engine, and a mistyped one is refused by name', async () => {
  const bytes = readFileSync(defaultModel());
  const plain = await Needle.load(bytes);
  const base = plain.info;
  plain.dispose();
  const asked = { kv: 'f32', numerics: 'deploy', layers: base.num_layers - 1, context: 64 };
  // Taken by every build, run by the gpu build only.
  const gpuOnly = { gpu_kernels: 'tiled' };
  const all = { ...asked, ...gpuOnly };
  assert.deepEqual(sorted(Object.keys(all)), sorted(core.map((o) => o.name)));
  const options = Object.fromEntries(Object.entries(all).map(([k, v]) => [PUBLIC[k] ?? k, v]));
  const needle = await Needle.load(bytes, options);
  const info = needle.info;
  needle.dispose();
  const seen = { kv: info.kv, numerics: info.numerics, layers: info.depth, context: info.capacity };
  assert.deepEqual(seen, asked);
  assert.notEqual(base.capacity, 64);
  assert.equal(info.backend, 'cpu');
  assert.equal(info.gpu_kernels, null);
  assert.equal(base.gpu_kernels, null);
  for (const [name, wrong] of [
    ['kv', 'f16'],
    ['numerics', 'fast'],
    ['gpu_kernels', 'fast'],
    ['gpu_kernels', 'Tiled'],
  ]) {
    const e = await Needle.load(bytes, { [PUBLIC[name] ?? name]: wrong }).then(
      () => assert.fail(`${name}: ${wrong} was accepted`),
      (err) => err,
    );
    assert.equal(e.code, 'invalid_argument', `${name}: ${e.message}`);
    assert.match(e.message, new RegExp(name), `${name}: ${e.message}`);
  }
});

test("gpuKernels 'subgroup' is refused as unsupported, saying why, before the download", async () => {
  for (const backend of ['auto', 'cpu', 'webgpu']) {
    // A URL nothing serves: the refusal comes before any fetch.
    const e = await Needle.load('http://127.0.0.1:9/never.cact', {
      gpuKernels: 'subgroup',
      backend,
      cache: 'none',
    }).then(
      () => assert.fail(`${backend}: subgroup was accepted`),
      (err) => err,
    );
    assert.equal(e.code, 'unsupported', `${backend}: ${e.message}`);
    assert.match(e.message, /gpuKernels 'subgroup'.*subgroups feature/, e.message);
  }
  // Not a string: the engine host's schema (engine/messages.js) names the option.
  const e = await Needle.load(readFileSync(defaultModel()), { gpuKernels: 2 }).then(
    () => assert.fail('gpuKernels: 2 was accepted'),
    (err) => err,
  );
  assert.equal(e.code, 'invalid_argument', e.message);
  assert.match(e.message, /gpu_kernels must be a string/, e.message);
});

test("backend 'auto' prepares its GPU engine with the load's gpuKernels", async () => {
  const prepared = [];
  const info = { vendor: 'acme', architecture: 'rdna-9', device: '', description: 'Acme Radeon 9' };
  const limits = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30 };
  seams = {
    // A hardware adapter and JSPI, so that 'auto' prepares a GPU engine (Node has neither).
    env: {
      navigator: { gpu: { requestAdapter: async () => ({ info, limits }) } },
      WebAssembly: { Suspending: function Suspending() {}, promising: () => {} },
    },
    choices: memoryChoices(),
    prepareGpu: async ({ config }) => {
      prepared.push(config);
      throw new Error('stopped by the test once the config is seen');
    },
  };
  try {
    const bytes = readFileSync(defaultModel());
    const needle = await Needle.load(bytes, { worker: false, gpuKernels: 'tiled' });
    let i = needle.info;
    while (['preparing', 'calibrating'].includes(i.backend_choice)) {
      await new Promise((r) => setTimeout(r, 5));
      i = await needle.refreshInfo();
    }
    await needle.dispose();
    assert.equal(i.backend_choice, 'declined', i.backend_reason);
    assert.deepEqual(
      prepared.map((c) => c.gpu_kernels),
      ['tiled'],
    );
  } finally {
    seams = {};
  }
});
