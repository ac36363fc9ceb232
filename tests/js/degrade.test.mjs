// Storage that degrades and downloads that resume (pkg/storage): a refused or full cache is a
// warning and the load goes on; a custom store; a connection cut mid-body resumes with Range and
// If-Range (local server, 127.0.0.1 only); SHA-256 without crypto.subtle.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

import { fetchModel } from '../../pkg/storage/model.js';
import { sha256HexJs } from '../../pkg/storage/sha256.js';
import { cacheUsage } from '../../pkg/storage/index.js';
import { FakeCaches } from './helpers.mjs';

const BODY = randomBytes(300_000);
const SHA = createHash('sha256').update(BODY).digest('hex');
const ETAG = `"${SHA.slice(0, 16)}"`;

// The server's behaviour per test: how many bytes to send before cutting the connection on each
// request (Infinity: all), whether it advertises ranges, and what it serves.
let plan;
const requests = [];
let server;
let base;

function serve(req, res) {
  const n = requests.length;
  requests.push({ url: req.url, range: req.headers.range, ifRange: req.headers['if-range'], auth: req.headers.authorization });
  const body = plan.body ?? BODY;
  let start = 0;
  const m = /^bytes=(\d+)-$/.exec(req.headers.range || '');
  const headers = { 'Content-Type': 'application/octet-stream', ETag: plan.etag ?? ETAG };
  if (plan.ranges) headers['Accept-Ranges'] = 'bytes';
  if (m && plan.ranges && req.headers['if-range'] === headers.ETag) {
    start = Number(m[1]);
    res.writeHead(206, { ...headers, 'Content-Length': body.length - start, 'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}` });
  } else {
    res.writeHead(200, { ...headers, 'Content-Length': body.length });
  }
  const cut = plan.cuts[n] ?? Infinity;
  const rest = body.subarray(start);
  if (cut >= rest.length) return res.end(rest);
  res.write(rest.subarray(0, cut), () => setTimeout(() => res.socket.destroy(), 20));
}

before(async () => {
  server = createServer(serve);
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());
beforeEach(() => {
  requests.length = 0;
  plan = { ranges: true, cuts: [] };
  delete globalThis.caches;
});
afterEach(() => delete globalThis.caches);

const logs = () => {
  const seen = { warn: [], info: [] };
  return { seen, log: { error() {}, debug() {}, warn: (m) => seen.warn.push(m), info: (m) => seen.info.push(m) } };
};
const fast = { backoffMs: 1, cache: 'none' };

test('a connection cut mid-body resumes with Range and If-Range; progress counts on; the hash covers the whole file', async () => {
  plan.cuts = [100_000, 80_000];
  const progress = [];
  const { seen, log } = logs();
  const got = await fetchModel(`${base}/m.cact`, { ...fast, log, integrity: SHA, onProgress: (p) => progress.push(p.loaded) });
  assert.equal(got.sha256, SHA);
  assert.ok(Buffer.from(got.bytes).equals(BODY));
  assert.equal(requests.length, 3);
  assert.equal(requests[0].range, undefined);
  const resumedAt = Number(/bytes=(\d+)-/.exec(requests[1].range)[1]);
  assert.ok(resumedAt >= 100_000 - 65_536 && resumedAt <= 100_000, `resumed at ${resumedAt}`);
  assert.equal(requests[1].ifRange, ETAG);
  assert.ok(requests[2].range, 'the second cut resumes too');
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i] >= progress[i - 1], 'progress never goes back');
  assert.equal(progress.at(-1), BODY.length);
  assert.equal(seen.info.filter((m) => m.includes('resuming at byte')).length, 2);
});

test('without Accept-Ranges a cut download starts again from zero', async () => {
  plan = { ranges: false, cuts: [50_000] };
  const got = await fetchModel(`${base}/m.cact`, fast);
  assert.ok(Buffer.from(got.bytes).equals(BODY));
  assert.equal(requests.length, 2);
  assert.equal(requests[1].range, undefined);
});

test('a file changed between the cut and the resume is fetched whole (If-Range fails), never spliced', async () => {
  plan.cuts = [100_000];
  const changed = randomBytes(BODY.length);
  const fetchFn = async (url, init) => {
    if (requests.length === 1) plan = { ranges: true, cuts: [], body: changed, etag: '"v2"' };
    return fetch(url, init);
  };
  const got = await fetchModel(`${base}/m.cact`, { ...fast, fetch: fetchFn });
  assert.ok(Buffer.from(got.bytes).equals(changed));
  assert.equal(requests[1].ifRange, ETAG);
});

test('retries are bounded: a server that always cuts fails with fetch_failed', async () => {
  plan.cuts = Array(10).fill(1000);
  await assert.rejects(fetchModel(`${base}/m.cact`, { ...fast, retries: 2 }), { code: 'fetch_failed' });
  assert.equal(requests.length, 3);
});

test('fetch: { headers } reaches the server; a fetch function is used', async () => {
  await fetchModel(`${base}/m.cact`, { ...fast, fetch: { headers: { Authorization: 'Bearer t0ken' } } });
  assert.equal(requests[0].auth, 'Bearer t0ken');
  let called = 0;
  await fetchModel(`${base}/m.cact`, { ...fast, fetch: (u, init) => (called++, fetch(u, { ...init, headers: { ...init.headers, authorization: 'x' } })) });
  assert.equal(called, 1);
  assert.equal(requests[1].auth, 'x');
});

test('SHA-256 in pure JS matches the standard vectors and node:crypto', () => {
  const enc = (s) => new TextEncoder().encode(s);
  assert.equal(sha256HexJs(enc('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256HexJs(enc('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(
    sha256HexJs(enc('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
  assert.equal(sha256HexJs(new Uint8Array(1_000_000).fill(0x61)), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  for (const n of [1, 55, 56, 63, 64, 65, 119, 120, 1000, 4097]) {
    const b = randomBytes(n);
    assert.equal(sha256HexJs(b), createHash('sha256').update(b).digest('hex'), `length ${n}`);
  }
});

test('without crypto.subtle (an insecure context) integrity is still checked', async () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
  try {
    const got = await fetchModel(`${base}/m.cact`, { ...fast, integrity: SHA });
    assert.equal(got.sha256, SHA);
    await assert.rejects(fetchModel(`${base}/m.cact`, { ...fast, integrity: '0'.repeat(64) }), { code: 'integrity' });
  } finally {
    Object.defineProperty(globalThis, 'crypto', saved);
  }
});

test('Cache Storage refusing to open is a warning; with nothing else the load goes on uncached', async () => {
  globalThis.caches = { open: () => Promise.reject(new DOMException('The operation is insecure.', 'SecurityError')) };
  const { seen, log } = logs();
  const got = await fetchModel(`${base}/m.cact`, { backoffMs: 1, log });
  assert.equal(got.from, 'network');
  assert.equal(got.storage, 'none');
  assert.ok(seen.warn.some((m) => m.includes('cache-api') && m.includes('SecurityError')), seen.warn.join('\n'));
  assert.ok(seen.warn.some((m) => m.includes('no model storage works')));
});

test('a full quota on put is a warning, the model still loads, and nothing half-written stays', async () => {
  const fake = new FakeCaches();
  const cache = await fake.open('needle-web-models-v1');
  cache.put = () => Promise.reject(new DOMException('quota', 'QuotaExceededError'));
  globalThis.caches = fake;
  const { seen, log } = logs();
  const got = await fetchModel(`${base}/m.cact`, { backoffMs: 1, log });
  assert.ok(Buffer.from(got.bytes).equals(BODY));
  assert.ok(seen.warn.some((m) => m.includes('quota is full')), seen.warn.join('\n'));
  assert.equal(cache.entries.size, 0);
});

test('a custom store {get, put, delete, keys} holds the model; cacheUsage names it', async () => {
  const map = new Map();
  const store = {
    get: async (k) => map.get(k),
    put: async (k, v) => void map.set(k, v),
    delete: async (k) => map.delete(k),
    keys: async () => [...map.keys()],
  };
  const first = await fetchModel(`${base}/m.cact`, { backoffMs: 1, cache: store });
  assert.equal(first.from, 'network');
  assert.equal(first.storage, 'custom');
  const second = await fetchModel(`${base}/m.cact`, { backoffMs: 1, cache: store });
  assert.equal(second.from, 'cache');
  assert.equal(requests.length, 1);
  const usage = await cacheUsage(store);
  assert.equal(usage.backend, 'custom');
  assert.equal(usage.bytes, BODY.length);
});

test('an unknown cache name is an invalid_argument', async () => {
  await assert.rejects(fetchModel(`${base}/m.cact`, { cache: 'localStorage' }), { code: 'invalid_argument' });
});
