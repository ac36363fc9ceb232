// Upstream's Needle 3 fixtures (f32 KV) through the gpu build in Chromium on SwiftShader, with
// `backend: 'webgpu'`: every logits row of prompt and greedy completion within 1e-4 of the row's
// largest value, and every greedy token identical (tests/v3_parity.rs's f32 bar), the rows coming
// back through the suspending call path (pkg/engine/call.js) from the GPU forward pass (src/gpu/,
// info.backend 'webgpu').
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

for (const name of readdirSync(join(FIXTURES, 'v3')).sort()) {
  test(`${name}: f32 logits and greedy tokens through the gpu build`, async () => {
    const c = JSON.parse(readFileSync(join(FIXTURES, 'v3', name, 'case.json'), 'utf8'));
    const mode = c.modes.f32;
    const ids = [...c.prompt_ids, ...mode.greedy].slice(0, mode.logits.rows);
    const out = await page.evaluate(
      async ({ name, ids, file }) => {
        const { Needle } = await import('/pkg/index.js');
        const needle = await Needle.load(`/fixtures/v3/${name}/model.cact`, {
          cache: false,
          backend: 'webgpu',
          kv: 'f32',
        });
        const t = performance.now();
        const rows = await needle.logits(ids);
        const ms = performance.now() - t;
        const info = needle.info;
        await needle.dispose();
        const ref = await (await fetch(`/fixtures/v3/${name}/${file}`)).arrayBuffer();
        return { rows: Array.from(rows), ref: Array.from(new Float32Array(ref)), info, ms };
      },
      { name, ids, file: mode.logits.file },
    );
    assert.equal(out.info.variant, 'gpu');
    const v = mode.logits.cols;
    assert.equal(out.rows.length, out.ref.length);
    let worst = 0;
    const argmax = (row) => row.reduce((best, x, i) => (x > row[best] ? i : best), 0);
    const ours = [];
    for (let i = 0; i < mode.logits.rows; i++) {
      const a = out.rows.slice(i * v, (i + 1) * v);
      const r = out.ref.slice(i * v, (i + 1) * v);
      const scale = Math.max(...r.map(Math.abs));
      const dev = Math.max(...a.map((x, j) => Math.abs(x - r[j]))) / scale;
      assert.ok(dev <= F32_BAR, `row ${i} deviates by ${dev.toExponential(3)}`);
      worst = Math.max(worst, dev);
      if (i >= c.prompt_ids.length - 1) ours.push(argmax(a));
    }
    assert.deepEqual(ours.slice(0, mode.greedy.length), mode.greedy);
    assert.equal(out.info.backend, 'webgpu');
    console.log(
      `# ${name} f32 on ${out.info.backend} (gpu build): worst ${worst.toExponential(2)}, ` +
        `${mode.logits.rows} rows in ${out.ms.toFixed(0)} ms`,
    );
  });
}
