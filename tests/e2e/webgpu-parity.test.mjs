// Upstream's Needle 3 fixtures through the gpu build in Chromium on SwiftShader, with `backend:
// 'webgpu'`, held as tests/v3_parity.rs holds the CPU path: f32 KV within 1e-4 of each row's
// largest value with every greedy token identical; int8 KV within the reference's own noise with
// tokens identical over its robust prefix. The rows come back through the suspending call path
// (pkg/engine/call.js) from the GPU forward pass (src/gpu/, info.backend 'webgpu'), on each
// kernel variant a browser can run (`gpuKernels`; src/gpu/README.md, Kernel variants), to the
// same bars.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { ROOT, defaultModel } from '../js/helpers.mjs';

const FIXTURES = join(ROOT, 'tests/fixtures');
const F32_BAR = 1e-4;

let server;
let context;
let profile;
let page;

before(async () => {
  server = await startServer({ port: 0, model: defaultModel(), mounts: [['/fixtures/', FIXTURES]] });
  profile = mkdtempSync(join(tmpdir(), 'needle-e2e-webgpu-parity-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--no-first-run',
      '--enable-unsafe-webgpu',
      '--use-webgpu-adapter=swiftshader',
      '--enable-features=Vulkan',
    ],
  });
  page = context.pages()[0] || (await context.newPage());
  await page.goto(`${server.url}pkg/package.json`);
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** An IEEE half (the int8-KV reference rows' storage) as a number. */
function half(h) {
  const e = (h >> 10) & 31;
  const m = h & 1023;
  const sign = h & 0x8000 ? -1 : 1;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** A mode's reference rows as numbers, and the storage quantum (FP16 moves a value 2^-11). */
function referenceRows(name, logits) {
  const bytes = readFileSync(join(FIXTURES, 'v3', name, logits.file));
  if (logits.dtype === 'f32')
    return { ref: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4), quantum: 0 };
  const halves = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  return { ref: Float64Array.from(halves, half), quantum: 2 ** -11 };
}

// f32 KV is held to 1e-4 with every greedy token; int8 KV to the reference's own measured noise
// (`tolerance`, plus FP16's quantum) with tokens identical over its robust prefix, as
// tests/v3_parity.rs holds the CPU path.
const MODES = { f32: 'f32', kv8: 'int8' };
// 'subgroup' is refused in browsers (tests/js/load-options.test.mjs).
const KERNELS = ['plain', 'tiled'];

for (const name of readdirSync(join(FIXTURES, 'v3')).sort()) {
  for (const [modeName, kv] of Object.entries(MODES)) {
    for (const kernels of KERNELS) checkFixture(name, modeName, kv, kernels);
  }
}

/** One fixture in one KV mode on one kernel variant, through the gpu build. */
function checkFixture(name, modeName, kv, kernels) {
  test(`${name}: ${modeName} logits and greedy tokens through the gpu build, ${kernels} kernels`, async () => {
    const c = JSON.parse(readFileSync(join(FIXTURES, 'v3', name, 'case.json'), 'utf8'));
    const mode = c.modes[modeName];
    const ids = [...c.prompt_ids, ...mode.greedy].slice(0, mode.logits.rows);
    const out = await page.evaluate(
      async ({ name, ids, kv, kernels }) => {
        const { Needle } = await import('/pkg/index.js');
        const needle = await Needle.load(`/fixtures/v3/${name}/model.cact`, {
          cache: false,
          backend: 'webgpu',
          kv,
          gpuKernels: kernels,
        });
        const t = performance.now();
        const rows = await needle.logits(ids);
        const ms = performance.now() - t;
        const info = needle.info;
        await needle.dispose();
        return { rows: Array.from(rows), info, ms };
      },
      { name, ids, kv, kernels },
    );
    assert.equal(out.info.variant, 'gpu');
    assert.equal(out.info.backend, 'webgpu');
    assert.equal(out.info.gpu_kernels, kernels);
    const { ref, quantum } = referenceRows(name, mode.logits);
    const exact = modeName === 'f32';
    const bar = exact ? F32_BAR : mode.tolerance + quantum;
    const checked = exact ? mode.greedy.length : mode.robust_prefix;
    const v = mode.logits.cols;
    assert.equal(out.rows.length, ref.length);
    let worst = 0;
    const argmax = (row) => row.reduce((best, x, i) => (x > row[best] ? i : best), 0);
    const ours = [];
    for (let i = 0; i < mode.logits.rows; i++) {
      const a = out.rows.slice(i * v, (i + 1) * v);
      const r = ref.slice(i * v, (i + 1) * v);
      const scale = r.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      const dev = a.reduce((m, x, j) => Math.max(m, Math.abs(x - r[j])), 0) / scale;
      assert.ok(dev <= bar, `row ${i} deviates by ${dev.toExponential(3)} > ${bar.toExponential(3)}`);
      worst = Math.max(worst, dev);
      if (i >= c.prompt_ids.length - 1) ours.push(argmax(a));
    }
    assert.deepEqual(ours.slice(0, checked), mode.greedy.slice(0, checked));
    console.log(
      `# ${name} ${modeName} on ${out.info.backend} (gpu build, ${kernels} kernels): worst ${worst.toExponential(2)} ` +
        `(bar ${bar.toExponential(2)}), ${checked} greedy tokens, ${mode.logits.rows} rows in ` +
        `${out.ms.toFixed(0)} ms`,
    );
  });
}
