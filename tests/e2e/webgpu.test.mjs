// The gpu build in Chromium (Debian's /usr/bin/chromium through Playwright) on SwiftShader's
// WebGPU adapter: `backend: 'webgpu'` runs it there, its session calls run through
// WebAssembly.promising with real WebGPU waits inside (at load: adapter, device, and a probe
// kernel's dispatch and read back, src/gpu/probe.rs), a destroyed device rejects the next call
// with gpu_lost and the call after it opens a new device; deploy numerics and a Needle 2 model
// reject a forced 'webgpu'. `backend: 'auto'` declines SwiftShader (a CPU implementation of
// WebGPU) with the reason and answers the demo's requests as fast as 'cpu', with the same calls;
// with SwiftShader presented as hardware (webgpu-hardware.mjs) 'auto' runs its real background
// path: the CPU answers while the gpu build is prepared and calibrated, the choice is
// remembered, a remembered GPU is adopted (with `gpuKernels: 'tiled'`, on those kernels), a
// device lost meanwhile leaves the CPU serving. In a
// Chromium without WebGPU, 'auto' runs on the CPU and a forced 'webgpu' rejects with
// gpu_unavailable.
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
      const info = await needle.refreshInfo();
      await needle.dispose();
      return { info, loadMs, tokens: r.tokens, timings: r.timings };
    },
    { options, query: QUERY, model },
  );

test("backend 'webgpu' runs the gpu build on SwiftShader; its calls give the CPU build's tokens", async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const gpu = await loadAndRun(page, { backend: 'webgpu' });
  assert.equal(gpu.info.variant, 'gpu');
  // The forward pass runs on the GPU (src/gpu/), and says so.
  assert.equal(gpu.info.backend, 'webgpu');
  assert.equal(gpu.info.backend_reason, null);
  assert.equal(gpu.info.backend_choice, null);
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

test('on a WebGPU adapter, deploy numerics and Needle 2 answer on the CPU under auto; webgpu rejects them', async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const NEEDLE2 = '/fixtures/v2/system_eos/model.cact';
  const cases = [
    ['deploy numerics', { numerics: 'deploy' }, '/models/default.cact', /deploy|A8|numerics/i],
    ['Needle 2', {}, NEEDLE2, /Needle 2/],
  ];
  for (const [label, options, model, why] of cases) {
    // 'auto' declines this software adapter before looking at the model.
    const auto = await loadAndRun(page, options, model);
    assert.equal(auto.info.backend, 'cpu', label);
    assert.notEqual(auto.info.variant, 'gpu', label);
    assert.match(auto.info.backend_reason, /swiftshader/i, label);
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

test("the demo shows the backend and auto's choice; its switch reloads the model", async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const settled = () =>
    page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, {
      timeout: 120_000,
    });
  const shown = () =>
    page.evaluate(() => {
      const line = document.getElementById('model-info');
      return { text: line.textContent, title: line.title };
    });
  const switchTo = async (backend) => {
    await page.evaluate(() => {
      document.body.dataset.state = 'switching';
    });
    await page.selectOption('#backend', backend);
    await settled();
    return shown();
  };
  await page.goto(server.url);
  await settled();
  const auto = await shown();
  assert.match(auto.text, / (threaded|simd)( ×\d+)? · CPU \(auto: declined\) · /);
  assert.match(auto.title, /\(google swiftshader\) is .*a CPU implementation of WebGPU/);
  const onGpu = await switchTo('webgpu');
  assert.match(onGpu.text, / gpu · WebGPU \(google swiftshader\) · /);
  const onCpu = await switchTo('cpu');
  assert.match(onCpu.text, / (threaded|simd)( ×\d+)? · CPU · /);
  assert.doesNotMatch(onCpu.text, /WebGPU|auto/);
});

/** The median of `xs`. */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test("auto declines SwiftShader and answers the demo's requests as fast as cpu, with the same calls", async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const QUERIES = [
    'Turn on the kitchen lights',
    'Dim the bedroom lights to 30%',
    'Set the thermostat to 21 degrees',
    'Lock the front door',
  ];
  // One page load's worth: load, the first answer (load included), then the later answers.
  const session = (backend) =>
    page.evaluate(
      async ({ backend, queries }) => {
        const { Needle } = await import('/pkg/index.js');
        const { environments } = await import('/pkg/environments.js');
        const t0 = performance.now();
        const needle = await Needle.load('/models/default.cact', { cache: false, backend });
        const loadMs = performance.now() - t0;
        const answers = [];
        const times = [];
        for (const query of queries) {
          const t = performance.now();
          const r = await needle.complete(query, environments.smart_home);
          times.push(performance.now() - t);
          answers.push(r.function_calls);
        }
        const firstMs = loadMs + times[0];
        const info = await needle.refreshInfo();
        await needle.dispose();
        return { info, firstMs, laterMs: times.slice(1), answers };
      },
      { backend, queries: QUERIES },
    );
  // One page load first (the browser's first compile of the module and its cache fill weigh on
  // neither), then alternating runs in alternating order, so the machine's load falls on both
  // alike; medians.
  await session('cpu');
  const runs = { auto: [], cpu: [] };
  for (const order of [['auto', 'cpu'], ['cpu', 'auto'], ['auto', 'cpu']])
    for (const b of order) runs[b].push(await session(b));
  for (const r of runs.auto) {
    assert.equal(r.info.backend, 'cpu');
    assert.notEqual(r.info.variant, 'gpu');
    assert.equal(r.info.backend_choice, 'declined');
    assert.match(r.info.backend_reason, /\(google swiftshader\) is .*a CPU implementation of WebGPU/);
    assert.deepEqual(r.answers, runs.cpu[0].answers);
  }
  const first = { auto: median(runs.auto.map((r) => r.firstMs)), cpu: median(runs.cpu.map((r) => r.firstMs)) };
  const later = {
    auto: median(runs.auto.flatMap((r) => r.laterMs)),
    cpu: median(runs.cpu.flatMap((r) => r.laterMs)),
  };
  console.log(
    `# auto vs cpu on SwiftShader's adapter (medians of 3 page loads, ${QUERIES.length - 1} later answers each): ` +
      `first answer, load included ${first.auto.toFixed(0)} vs ${first.cpu.toFixed(0)} ms ` +
      `(${(first.auto / first.cpu).toFixed(2)}x); later answers ${later.auto.toFixed(1)} vs ` +
      `${later.cpu.toFixed(1)} ms (${(later.auto / later.cpu).toFixed(2)}x); variant ${runs.auto[0].info.variant}`,
  );
  assert.ok(first.auto < 1.5 * first.cpu, `first answer ${first.auto} vs ${first.cpu} ms`);
  assert.ok(later.auto < 1.5 * later.cpu, `later answers ${later.auto} vs ${later.cpu} ms`);
});

test("auto on a hardware adapter: the CPU answers while the gpu build is prepared and calibrated; the choice is remembered, a remembered GPU adopted", async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const out = await page.evaluate(async (query) => {
    const { Needle } = await import('/pkg/index.js');
    const { decided, rememberGpu } = await import('/e2e/webgpu-choice.mjs');
    // SwiftShader presented as hardware (webgpu-hardware.mjs), so 'auto' does not decline it.
    const options = { cache: false, workerUrl: '/e2e/webgpu-hardware-worker.mjs' };
    const ask = { tools: [], maxTokens: 16, temperature: 0 };
    const first = await Needle.load('/models/default.cact', options);
    const atLoad = first.info;
    const early = await first.complete(query, ask);
    const calibrated = await decided(first);
    const later = await first.complete(query, ask);
    await first.dispose();
    const again = await Needle.load('/models/default.cact', options);
    const remembered = await decided(again);
    await again.dispose();
    // The stored choice (storage/choices.js) turned to the GPU: the next load adopts it.
    const keys = await rememberGpu();
    const third = await Needle.load('/models/default.cact', options);
    const adopted = await decided(third);
    const onGpu = await third.complete(query, ask);
    await third.dispose();
    return { atLoad, early: early.tokens, calibrated, later: later.tokens, remembered, keys, adopted, onGpu: onGpu.tokens };
  }, QUERY);
  assert.equal(out.atLoad.backend, 'cpu');
  assert.notEqual(out.atLoad.variant, 'gpu');
  assert.equal(out.atLoad.backend_choice, 'preparing');
  assert.ok(out.early.length > 0);
  const c = out.calibrated;
  assert.ok(['cpu', 'webgpu'].includes(c.backend_choice), c.backend_reason);
  assert.equal(c.backend, c.backend_choice);
  assert.ok(c.calibration.cpu.ms > 0 && c.calibration.webgpu.ms > 0, JSON.stringify(c.calibration));
  assert.equal(c.calibration.cpu.tokens, c.calibration.webgpu.tokens, 'the same workload');
  assert.deepEqual(out.later, out.early);
  assert.equal(out.keys.length, 1);
  assert.equal(out.remembered.backend_choice, c.backend_choice);
  assert.match(out.remembered.backend_reason, /^remembered: /);
  assert.deepEqual(out.remembered.calibration, c.calibration);
  assert.equal(out.adopted.backend_choice, 'webgpu');
  assert.equal(out.adopted.backend, 'webgpu');
  assert.equal(out.adopted.variant, 'gpu');
  assert.match(out.adopted.backend_reason, /^remembered: seeded by the test/);
  assert.deepEqual(out.onGpu, out.early);
  const f = (x) => `${x.ms.toFixed(0)} ms (prefill ${x.prefill_ms.toFixed(0)}, decode ${x.decode_ms.toFixed(0)})`;
  console.log(
    `# auto's calibration with SwiftShader presented as hardware: WebGPU ${f(c.calibration.webgpu)}, ` +
      `CPU ${f(c.calibration.cpu)} -> ${c.backend_choice}`,
  );
});

test("auto with gpuKernels 'tiled': the GPU engine it prepares, calibrates and adopts runs the tiled kernels", async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const out = await page.evaluate(async (query) => {
    const { Needle } = await import('/pkg/index.js');
    const { decided, rememberGpu } = await import('/e2e/webgpu-choice.mjs');
    const options = {
      cache: false,
      workerUrl: '/e2e/webgpu-hardware-worker.mjs',
      gpuKernels: 'tiled',
    };
    const ask = { tools: [], maxTokens: 16, temperature: 0 };
    const first = await Needle.load('/models/default.cact', options);
    const onCpu = await first.complete(query, ask);
    const calibrated = await decided(first);
    await first.dispose();
    await rememberGpu();
    const again = await Needle.load('/models/default.cact', options);
    const adopted = await decided(again);
    const onGpu = await again.complete(query, ask);
    await again.dispose();
    return { calibrated, adopted, onCpu: onCpu.tokens, onGpu: onGpu.tokens };
  }, QUERY);
  const c = out.calibrated;
  assert.ok(['cpu', 'webgpu'].includes(c.backend_choice), c.backend_reason);
  assert.ok(c.calibration.webgpu.ms > 0, JSON.stringify(c.calibration));
  assert.equal(c.calibration.cpu.tokens, c.calibration.webgpu.tokens, 'the same workload');
  assert.equal(c.gpu_kernels, c.backend_choice === 'webgpu' ? 'tiled' : null);
  assert.equal(out.adopted.backend, 'webgpu');
  assert.equal(out.adopted.variant, 'gpu');
  assert.equal(out.adopted.gpu_kernels, 'tiled');
  assert.deepEqual(out.onGpu, out.onCpu);
  console.log(
    `# auto, tiled kernels, SwiftShader presented as hardware: WebGPU ${c.calibration.webgpu.ms.toFixed(0)} ms, ` +
      `CPU ${c.calibration.cpu.ms.toFixed(0)} ms -> ${c.backend_choice}; adopted from a remembered choice: ` +
      `${out.adopted.gpu_kernels}, ${out.onGpu.length} tokens as the CPU's`,
  );
});

test('auto on a hardware adapter whose device is lost during the background preparation: the CPU serves, with the reason', async () => {
  const page = await open([...ARGS, ...WEBGPU]);
  const out = await page.evaluate(async (query) => {
    const { Needle } = await import('/pkg/index.js');
    const needle = await Needle.load('/models/default.cact', {
      cache: false,
      workerUrl: '/e2e/webgpu-hardware-worker.mjs?lose',
    });
    const ask = { tools: [], maxTokens: 16, temperature: 0 };
    const first = await needle.complete(query, ask);
    let info;
    do {
      await new Promise((r) => setTimeout(r, 20));
      info = await needle.refreshInfo();
    } while (['preparing', 'calibrating'].includes(info.backend_choice));
    const after = await needle.complete(query, ask);
    await needle.dispose();
    return { info, first: first.tokens, after: after.tokens };
  }, QUERY);
  assert.equal(out.info.backend_choice, 'declined');
  assert.equal(out.info.backend, 'cpu');
  assert.notEqual(out.info.variant, 'gpu');
  assert.match(out.info.backend_reason, /^WebGPU was not used: /);
  assert.ok(out.first.length > 0);
  assert.deepEqual(out.after, out.first);
  console.log(`# device lost during the preparation: ${out.info.backend_reason}`);
});
