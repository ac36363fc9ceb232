#!/usr/bin/env node
// Loads the default model over and over in one browser of the e2e matrix and counts the loads that
// do not finish (issue 42's Firefox stall was 1 load in ~30 on a busy 2-core machine).
//
//   node tools/load-loop.mjs [--engine firefox] [--loads 100] [--mode dispose|reload] [--busy 2]
//
// dispose: Needle.load then dispose, again and again in one page (stallTimeout 20 s).
// reload:  pkg/examples/browser.html opened again and again (not ready in 25 s counts).
// --busy N keeps N cores busy meanwhile (child processes, ended with the run).
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

import { startServer } from './serve.mjs';
import { defaultModel } from '../tests/js/helpers.mjs';
import { launch } from '../tests/e2e/browsers/index.mjs';

const { values: o } = parseArgs({
  options: {
    engine: { type: 'string', default: 'firefox' },
    loads: { type: 'string', default: '100' },
    mode: { type: 'string', default: 'dispose' },
    busy: { type: 'string', default: '0' },
  },
});
const busy = Array.from({ length: Number(o.busy) }, () =>
  spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
);
const server = await startServer({ port: 0, model: defaultModel() });
const browser = await launch(o.engine);

async function disposeLoop(n) {
  const page = await browser.open(`${server.url}pkg/package.json`);
  const failed = [];
  for (let i = 0; i < n; i++) {
    const r = await page.evaluate(async () => {
      const { Needle } = await import('/pkg/index.js');
      let last = null;
      try {
        const needle = await Needle.load('/models/default.cact', {
          stallTimeout: 20_000,
          onProgress: (p) => (last = p),
        });
        needle.dispose();
        return null;
      } catch (e) {
        return { code: e.code, last };
      }
    });
    if (r) failed.push({ load: i, ...r });
  }
  return failed;
}

async function reloadLoop(n) {
  const failed = [];
  for (let i = 0; i < n; i++) {
    const page = await browser.open(`${server.url}pkg/examples/browser.html?load=${i}`);
    const end = Date.now() + 25_000;
    let status = '';
    while (Date.now() < end) {
      status = await page.evaluate(() => document.getElementById('status').textContent);
      if (/^ready|error|fail/i.test(status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!/^ready/.test(status)) failed.push({ load: i, status });
  }
  return failed;
}

try {
  const n = Number(o.loads);
  const failed = o.mode === 'reload' ? await reloadLoop(n) : await disposeLoop(n);
  for (const f of failed) console.log(JSON.stringify(f));
  console.log(
    `${o.engine}, ${o.mode}, ${o.busy} busy cores: ${failed.length} of ${n} loads did not finish`,
  );
} finally {
  await browser.close();
  await server.close();
  for (const p of busy) p.kill();
}
