// The gpu build in Chromium (Debian's /usr/bin/chromium through Playwright) on SwiftShader's
// WebGPU adapter: `backend: 'auto'` picks it there, its session calls run through
// WebAssembly.promising with real WebGPU waits inside (at load: adapter, device, and a probe
// kernel's dispatch and read back, src/gpu/probe.rs), a destroyed device rejects the next call
// with gpu_lost and the call after it opens a new device; deploy numerics and a Needle 2 model
// run on the CPU under 'auto' (with the reason) and reject a forced 'webgpu'; and in a Chromium
// without WebGPU, 'auto' runs on the CPU and a forced 'webgpu' rejects with gpu_unavailable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { defaultModel } from '../js/helpers.mjs';

const ARGS = ['--headless', '--no-sandbox', '--no-first-run', '--disable-background-networking'];
const WEBGPU = ['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader', '--enable-features=Vulkan'];
const QUERY = 'Turn on the kitchen lights';

let server;
const browsers = [];

async function open(args) {
  const profile = mkdtempSync(join(tmpdir(), 'needle-e2e-webgpu-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args,
  });
  browsers.push({ context, profile });
  const page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', (e) => console.log('pageerror', e.message));
  // Same origin as the package (WebGPU needs a secure context: 127.0.0.1 is one).
  await page.goto(`${server.url}pkg/package.json`);
  return page;
}

before(async () => {
  const here = dirname(fileURLToPath(import.meta.url));
  const fixtures = join(here, '../fixtures');
  server = await startServer({
    port: 0,
    model: defaultModel(),
    mounts: [
      ['/e2e/', here],
      ['/fixtures/', fixtures],
    ],
  });
});

after(async () => {
  for (const { context, profile } of browsers) {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  await server?.close();
});

/** In the page: loads with `options`, then a greedy completion; info, tokens and timings. */
const loadAndRun = (page, options, model = '/models/default.cact') =>
  page.evaluate(
    async ({ options, query, model }) => {
      const { Needle } = await import('/pkg/index.js');
      const t = performance.now();
      const needle = await Needle.load(model, { cache: false, ...options });
      const loadMs = performance.now() - t;
      const r = await needle.complete(query, { tools: [], maxTokens: 16, temperature: 0 });
      const info = needle.info;
      await needle.dispose();
      return { info, loadMs, tokens: r.tokens, timings: r.timings };
    },
    { options, query: QUERY, model },
  );

test('auto picks the gpu build on a WebGPU adapter; its calls give the CPU build\'s tokens', async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const gpu = await loadAndRun(page, {});
  assert.equal(gpu.info.variant, 'gpu');
  // The forward pass runs on the GPU (src/gpu/), and says so.
  assert.equal(gpu.info.backend, 'webgpu');
  assert.equal(gpu.info.backend_reason, null);
  assert.ok(gpu.info.adapter, 'the adapter is reported');
  assert.ok(gpu.info.adapter.vendor || gpu.info.adapter.architecture, JSON.stringify(gpu.info.adapter));
  const cpu = await loadAndRun(page, { backend: 'cpu', threads: false });
  assert.equal(cpu.info.variant, 'simd');
  assert.equal(cpu.info.adapter, null);
  // GPU memory: the codes, floats, activations and state, more than the container (0.74 MB)
  // and, for this small model, under ten times it.
  assert.ok(gpu.info.gpu_bytes > gpu.info.bytes && gpu.info.gpu_bytes < 10 * gpu.info.bytes, `${gpu.info.gpu_bytes}`);
  assert.equal(cpu.info.gpu_bytes, null);
  assert.deepEqual(gpu.tokens, cpu.tokens);
  console.log(
    `# adapter ${JSON.stringify(gpu.info.adapter)}; load ${gpu.loadMs.toFixed(0)} ms (gpu build, ` +
      `init ${gpu.info.load_ms.init.toFixed(0)} ms incl. device ${gpu.info.load_ms.device.toFixed(0)} ms) vs ` +
      `${cpu.loadMs.toFixed(0)} ms (simd); decode ${gpu.timings.tokens_per_s.toFixed(1)} vs ` +
      `${cpu.timings.tokens_per_s.toFixed(1)} tok/s; prefill ${gpu.timings.prefill_ms.toFixed(0)} vs ` +
      `${cpu.timings.prefill_ms.toFixed(0)} ms`,
  );
});

test('a destroyed device rejects the next call with gpu_lost; the call after opens a new one', async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const started = page.waitForEvent('worker');
  await page.evaluate(async () => {
    const { Needle } = await import('/pkg/index.js');
    window.__needle = await Needle.load('/models/default.cact', {
      cache: false,
      backend: 'webgpu',
      workerUrl: '/e2e/webgpu-worker.mjs',
    });
  });
  const worker = await started;
  // Two devices at load: the probe's (dropped once it has computed), then the engine's.
  const atLoad = await worker.evaluate(() => self.__gpuDevices.length);
  assert.equal(atLoad, 2);
  await worker.evaluate(() => self.__gpuDevices.at(-1).destroy());
  const outcome = await page.evaluate(async (query) => {
    const settle = (p) =>
      p.then(
        (r) => ({ settled: 'resolved', tokens: r.tokens }),
        (e) => ({ settled: 'rejected', code: e.code, message: e.message }),
      );
    const lost = await settle(window.__needle.complete(query, { tools: [], maxTokens: 4 }));
    const next = await settle(window.__needle.complete(query, { tools: [], maxTokens: 4 }));
    return { lost, next, info: window.__needle.info };
  }, QUERY);
  assert.equal(outcome.lost.settled, 'rejected', JSON.stringify(outcome.lost));
  assert.equal(outcome.lost.code, 'gpu_lost', outcome.lost.message);
  assert.equal(outcome.next.settled, 'resolved', JSON.stringify(outcome.next));
  assert.equal(await worker.evaluate(() => self.__gpuDevices.length), atLoad + 1, 'a new device');
  assert.equal(outcome.info.variant, 'gpu');
});

test('on a WebGPU adapter, deploy numerics and Needle 2 run on the CPU under auto; webgpu rejects them', async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const NEEDLE2 = '/fixtures/v2/system_eos/model.cact';
  const cases = [
    ['deploy numerics', { numerics: 'deploy' }, '/models/default.cact', /deploy|A8|numerics/i],
    ['Needle 2', {}, NEEDLE2, /Needle 2/],
  ];
  for (const [label, options, model, why] of cases) {
    const auto = await loadAndRun(page, options, model);
    assert.equal(auto.info.backend, 'cpu', label);
    assert.notEqual(auto.info.variant, 'gpu', label);
    assert.match(auto.info.backend_reason, why, label);
    assert.ok(auto.tokens.length > 0, label);
    const forced = await page.evaluate(
      async ({ options, model }) => {
        const { Needle } = await import('/pkg/index.js');
        return Needle.load(model, { cache: false, backend: 'webgpu', ...options }).then(
          (n) => (n.dispose(), 'loaded'),
          (e) => `${e.code}: ${e.message}`,
        );
      },
      { options, model },
    );
    assert.match(forced, /^gpu_unavailable: /, label);
    assert.match(forced, why, label);
  }
});

test('without WebGPU, auto runs on the CPU with the reason and webgpu rejects', async () => {
  const page = await open([...ARGS, '--disable-gpu']);
  const auto = await loadAndRun(page, {});
  assert.notEqual(auto.info.variant, 'gpu');
  assert.equal(auto.info.backend, 'cpu');
  assert.match(auto.info.backend_reason, /WebGPU|adapter/);
  const forced = await page.evaluate(async () => {
    const { Needle } = await import('/pkg/index.js');
    return Needle.load('/models/default.cact', { cache: false, backend: 'webgpu' }).then(
      () => 'loaded',
      (e) => e.code,
    );
  });
  assert.equal(forced, 'gpu_unavailable');
});

test("an abort during the gpu build's generation stops it between two calls", async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const outcome = await page.evaluate(async (query) => {
    const { Needle } = await import('/pkg/index.js');
    const needle = await Needle.load('/models/default.cact', { cache: false, backend: 'webgpu' });
    const ctl = new AbortController();
    const settled = await needle
      .complete(query, {
        tools: [],
        maxTokens: 200,
        temperature: 1,
        seed: 7,
        signal: ctl.signal,
        onToken: () => ctl.abort(),
      })
      .then(
        (r) => ({ settled: 'resolved', stop: r.stop_reason }),
        (e) => ({ settled: 'rejected', name: e.name, stop: e.result && e.result.stop_reason }),
      );
    const after = await needle.complete(query, { tools: [], maxTokens: 2 });
    await needle.dispose();
    return { settled, variant: needle.info.variant, after: after.stop_reason };
  }, QUERY);
  assert.equal(outcome.variant, 'gpu');
  assert.deepEqual(outcome.settled, { settled: 'rejected', name: 'AbortError', stop: 'aborted' });
  assert.ok(outcome.after, 'the session takes the next request');
});

test('the demo shows the backend, and its switch reloads the model on the CPU', async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const settled = () =>
    page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, {
      timeout: 120_000,
    });
  await page.goto(server.url);
  await settled();
  const onGpu = await page.evaluate(() => document.getElementById('model-info').textContent);
  assert.match(onGpu, / gpu · WebGPU \(google swiftshader\)/);
  await page.evaluate(() => {
    document.body.dataset.state = 'switching';
  });
  await page.selectOption('#backend', 'cpu');
  await settled();
  const onCpu = await page.evaluate(() => document.getElementById('model-info').textContent);
  assert.match(onCpu, / (threaded|simd)( ×\d+)? · CPU · /);
  assert.doesNotMatch(onCpu, /WebGPU/);
});
