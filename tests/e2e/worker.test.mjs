// The package's engine worker in Chromium (Playwright, Debian's /usr/bin/chromium): a worker that
// dies mid-generation (here it closes itself, as a crash or an out-of-memory kill would end it)
// is noticed: everything pending rejects with worker_died and the instance reports itself disposed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { defaultModel } from '../js/helpers.mjs';

let server;
let context;
let page;
let profile;

before(async () => {
  server = await startServer({ port: 0, model: defaultModel() });
  profile = mkdtempSync(join(tmpdir(), 'needle-e2e-worker-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  page = await context.newPage();
  await page.goto(`${server.url}pkg/examples/browser.html`);
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('a worker that dies mid-generation rejects pending and later calls with worker_died', async () => {
  const workerStarted = page.waitForEvent('worker');
  await page.evaluate(async () => {
    const { Needle } = await import('/pkg/index.js');
    const needle = await Needle.load('/models/default.cact', { cache: false });
    window.__needle = needle;
    // A queue of generations: the first is running when the worker dies, the rest are waiting.
    const settle = (p) =>
      p.then(
        () => ({ settled: 'resolved' }),
        (e) => ({ settled: 'rejected', code: e.code, name: e.name, message: e.message }),
      );
    window.__firstToken = new Promise((resolve) => {
      window.__pending = Array.from({ length: 32 }, (_, i) =>
        settle(needle.complete(`Turn on the kitchen lights ${i}`, { maxTokens: 256, temperature: 1, seed: i, onToken: resolve })),
      );
    });
  });
  const worker = await workerStarted;
  assert.match(worker.url(), /\/pkg\/worker\.js$/);
  await page.evaluate(() => window.__firstToken);
  // Ends the worker from inside, with no message and no error event: only its lock tells.
  await worker.evaluate(() => self.close()).catch(() => {});
  const outcome = await page.evaluate(async () => {
    const timeout = new Promise((r) => setTimeout(() => r('timeout'), 10_000));
    const pending = await Promise.race([Promise.all(window.__pending), timeout]);
    const later = await window.__needle.tokenize('after').then(
      () => ({ settled: 'resolved' }),
      (e) => ({ settled: 'rejected', code: e.code }),
    );
    return { pending, later, disposed: window.__needle.disposed };
  });
  assert.notEqual(outcome.pending, 'timeout', 'calls were left unsettled');
  const rejected = outcome.pending.filter((r) => r.settled === 'rejected');
  // However many finished before it died (a busy machine runs a few), the rest were rejected.
  assert.ok(rejected.length > 0 && outcome.pending.at(-1).settled === 'rejected', `the queued calls rejected: ${JSON.stringify(outcome.pending)}`);
  for (const r of rejected) {
    assert.equal(r.code, 'worker_died', r.message);
    assert.equal(r.name, 'NeedleError');
  }
  assert.equal(outcome.later.code, 'worker_died');
  assert.equal(outcome.disposed, true);
});

test('a worker whose script cannot load rejects the load with worker_died instead of hanging', async () => {
  const outcome = await page.evaluate(async () => {
    const { Needle } = await import('/pkg/index.js');
    // A Worker constructor whose script is missing: the platform reports it only as an error event.
    const Real = window.Worker;
    window.Worker = class extends Real {
      constructor(_url, options) {
        super('/pkg/missing-worker.js', options);
      }
    };
    try {
      const timeout = new Promise((r) => setTimeout(() => r({ settled: 'pending' }), 10_000));
      return await Promise.race([
        Needle.load('/models/default.cact', { cache: false }).then(
          () => ({ settled: 'resolved' }),
          (e) => ({ settled: 'rejected', code: e.code }),
        ),
        timeout,
      ]);
    } finally {
      window.Worker = Real;
    }
  });
  assert.deepEqual(outcome, { settled: 'rejected', code: 'worker_died' });
});
