// A Node worker thread running the engine that dies mid-generation (killed from outside, as a
// crash or an out-of-memory kill ends it) is noticed: pending and later calls reject with
// worker_died and the instance reports itself disposed. (The Web Worker twin: tests/e2e/worker.test.mjs.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

import { Needle, NeedleError } from '../../pkg/index.js';
import { defaultModel } from './helpers.mjs';

const BYTES = new Uint8Array(readFileSync(defaultModel()));

// Records every worker thread the package starts, so the test can kill one.
const threads = createRequire(import.meta.url)('node:worker_threads');
const RealWorker = threads.Worker;
const started = [];
threads.Worker = class extends RealWorker {
  constructor(...args) {
    super(...args);
    started.push(this);
  }
};
syncBuiltinESMExports();
after(() => {
  threads.Worker = RealWorker;
  syncBuiltinESMExports();
});

const settle = (p) =>
  p.then(
    () => ({ settled: 'resolved' }),
    (e) => ({ settled: 'rejected', error: e }),
  );

test('a worker thread killed mid-generation rejects pending and later calls with worker_died', async () => {
  const needle = await Needle.load(BYTES, { worker: true });
  assert.equal(needle.info.thread, 'worker');
  const thread = started.at(-1);
  let first;
  const tokenSeen = new Promise((r) => (first = r));
  const pending = settle(needle.complete('Turn on the lights and tell me a long story', { maxTokens: 4000, temperature: 1, seed: 3, onToken: first }));
  const queued = settle(needle.tokenize('queued behind it'));
  await tokenSeen;
  await thread.terminate();
  const [p, q] = await Promise.all([pending, queued]);
  for (const r of [p, q]) {
    assert.equal(r.settled, 'rejected');
    assert.ok(r.error instanceof NeedleError);
    assert.equal(r.error.code, 'worker_died', r.error.message);
  }
  assert.equal(needle.disposed, true);
  const later = await settle(needle.tokenize('after'));
  assert.equal(later.error.code, 'worker_died');
});
