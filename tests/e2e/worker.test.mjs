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
  // A same-origin document that starts no engine of its own (the example page loads one).
  await page.goto(`${server.url}pkg/package.json`);
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
    window.__needle = await Needle.load('/models/default.cact', { cache: false });
  });
  const worker = await workerStarted;
  assert.match(worker.url(), /\/pkg\/worker\.js$/);
  // The worker ends itself right after streaming its first token, with no message and no error
  // event (as a crash or an out-of-memory kill would end it): only its lock tells. Closing from
  // inside, not from the test, keeps the moment independent of how busy the machine is.
  await worker.evaluate(() => {
    const post = self.postMessage.bind(self);
    self.postMessage = (msg, transfer) => {
      post(msg, transfer);
      if (msg && msg.type === 'token') self.close();
    };
  });
  await page.evaluate(async () => {
    // A queue of generations: the first is running when the worker dies, the rest are waiting.
    const settle = (p) =>
      p.then(
        () => ({ settled: 'resolved' }),
        (e) => ({ settled: 'rejected', code: e.code, name: e.name, message: e.message }),
      );
    await new Promise((resolve) => {
      window.__pending = Array.from({ length: 32 }, (_, i) =>
        settle(window.__needle.complete(`Turn on the kitchen lights ${i}`, { maxTokens: 256, temperature: 1, seed: i, onToken: resolve })),
      );
      Promise.race(window.__pending).then(resolve); // should the token not arrive, the test still ends
    });
  });
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
  assert.equal(rejected.length, outcome.pending.length, `every queued call rejected: ${JSON.stringify(outcome.pending)}`);
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
