// A load that cannot finish ends in a typed error within a bounded time (issue 42: a Firefox load
// once stayed pending with no error and no progress). Here the server sends the model's headers
// and then nothing, the way a stalled connection looks: the load fails with code 'timeout' after
// `stallTimeout` ms without progress, and progress that keeps coming keeps a slow load alive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

import { Needle, NeedleError } from '../../pkg/index.js';
import { defaultModel } from './helpers.mjs';

const MODEL = readFileSync(defaultModel());
let server;
let url;
const held = [];

before(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(MODEL.length) });
    if (req.url === '/stalls.cact') {
      res.write(MODEL.subarray(0, 1000));
      held.push(res); // never ended
      return;
    }
    // /slow.cact: the whole model in 20 pieces, 100 ms apart.
    const step = Math.ceil(MODEL.length / 20);
    let at = 0;
    const next = () => {
      if (res.destroyed) return;
      if (at >= MODEL.length) return res.end();
      res.write(MODEL.subarray(at, (at += step)));
      setTimeout(next, 100);
    };
    next();
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  server.close();
});

/** The load's outcome, or 'pending' after `ms`. */
function settle(promise, ms) {
  return Promise.race([
    promise.then(
      (needle) => (needle.dispose(), 'resolved'),
      (e) => e,
    ),
    new Promise((r) => setTimeout(() => r('pending'), ms)),
  ]);
}

for (const worker of [true, false]) {
  test(`a stalled download rejects with NeedleError('timeout') (${worker ? 'worker' : 'inline'})`, async () => {
    const t0 = Date.now();
    const outcome = await settle(Needle.load(`${url}/stalls.cact`, { cache: 'none', worker, stallTimeout: 700 }), 10_000);
    assert.ok(outcome instanceof NeedleError, `the load settled as ${outcome}`);
    assert.equal(outcome.code, 'timeout');
    assert.match(outcome.message, /no progress for 700 ms/);
    assert.ok(Date.now() - t0 < 5000);
  });
}

test("Needle.download: a stalled download rejects with NeedleError('timeout'); an abort stays an abort", async () => {
  const outcome = await settle(Needle.download(`${url}/stalls.cact`, { cache: 'none', stallTimeout: 700 }), 10_000);
  assert.ok(outcome instanceof NeedleError, `the download settled as ${outcome}`);
  assert.equal(outcome.code, 'timeout');
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 300);
  const aborted = await settle(Needle.download(`${url}/stalls.cact`, { cache: 'none', signal: stop.signal }), 10_000);
  assert.equal(aborted.code, 'aborted');
});

test('a slow download that keeps making progress is not cut off', async () => {
  const outcome = await settle(Needle.load(`${url}/slow.cact`, { cache: 'none', stallTimeout: 700 }), 30_000);
  assert.equal(outcome, 'resolved', String(outcome));
});
