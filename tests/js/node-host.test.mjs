// Node off the main thread: by default the engine runs in a worker_threads Worker, so the event
// loop stays responsive while a model loads and generates; `worker: false` runs it inline.
// Timer lag is the largest delay of a 5 ms interval beyond its period during load + one query.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

import { Needle } from '../../pkg/index.js';
import { environments } from '../../pkg/environments.js';
import { ROOT } from './helpers.mjs';

const MODEL = new URL('../../pkg/models/default.cact', import.meta.url);
const QUERY = 'Set the living room thermostat to 21 degrees and turn off the kitchen lights';

async function lagDuring(work) {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 5);
    last = now;
  }, 5);
  try {
    return { value: await work(), lagMs: worst };
  } finally {
    clearInterval(timer);
  }
}

async function loadAndAsk(options) {
  const needle = await Needle.load(new Uint8Array(readFileSync(MODEL)), options);
  try {
    const result = await needle.complete(QUERY, { ...environments.smart_home, maxTokens: 256 });
    return { thread: needle.info.thread, result };
  } finally {
    needle.dispose();
  }
}

test('by default the engine runs in a worker thread and the event loop keeps ticking', async () => {
  const inline = await lagDuring(() => loadAndAsk({ worker: false }));
  const worker = await lagDuring(() => loadAndAsk({}));
  console.log(`timer lag: worker ${worker.lagMs.toFixed(1)} ms, inline ${inline.lagMs.toFixed(1)} ms`);
  assert.equal(worker.value.thread, 'worker');
  assert.equal(inline.value.thread, 'inline');
  assert.deepEqual(worker.value.result.tokens, inline.value.result.tokens, 'the same answer on either host');
  // Inline, loading and prefill block the loop; in a worker only message handling does.
  assert.ok(worker.lagMs < Math.max(50, inline.lagMs / 2), `worker lag ${worker.lagMs} ms vs inline ${inline.lagMs} ms`);
});

test('a script that loads a model and never disposes it still exits (the worker is unref-ed when idle)', () => {
  const script = `import { Needle } from './pkg/index.js';
    const n = await Needle.load(new Uint8Array((await import('node:fs')).readFileSync('pkg/models/default.cact')));
    const r = await n.complete('Turn on the kitchen lights', { maxTokens: 8 });
    console.log(r.tokens.length > 0 ? 'answered' : 'empty');`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /answered/);
});

test('a worker thread that exits on its own is reported; one that is terminated is not', async () => {
  const { Worker } = await import('node:worker_threads');
  const { nodeWorkerHost } = await import('../../pkg/host/node.js');
  const keepAlive = setInterval(() => {}, 1000); // the host unrefs an idle worker
  const died = nodeWorkerHost(new Worker('setTimeout(() => process.exit(3), 50)', { eval: true }));
  const reason = await new Promise((resolve) => died.onDeath(resolve)).finally(() => clearInterval(keepAlive));
  assert.match(reason, /exited with code 3/);

  const stopped = nodeWorkerHost(new Worker('setInterval(() => {}, 1000)', { eval: true }));
  let reported = null;
  stopped.onDeath((why) => (reported = why));
  stopped.terminate();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(reported, null);
});
