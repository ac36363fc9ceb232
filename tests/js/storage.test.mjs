// pkg/storage: downloads, Cache Storage entries with their length and hash, integrity, eviction.
// Node has no Cache Storage, so these tests install an in-memory one; the browser e2e tests run the
// same paths against Chromium's (tests/e2e/storage.test.mjs: fallbacks, quota).
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { isCached, evict, cacheUsage, CACHE_NAME } from '../../pkg/storage/index.js';
import { fetchModel, integrityHex } from '../../pkg/storage/model.js';
import { startServer } from '../../tools/serve.mjs';
import { FakeCaches, tempDir } from './helpers.mjs';

const BODY = randomBytes(200_000);
const SHA = createHash('sha256').update(BODY).digest('hex');
let server;
let url;
const fetched = [];

before(async () => {
  const file = join(tempDir(), 'blob.cact');
  writeFileSync(file, BODY);
  server = await startServer({ port: 0, model: file, onRequest: (r) => fetched.push(r) });
  url = `${server.url}models/default.cact`;
});
after(() => server.close());
beforeEach(() => {
  globalThis.caches = new FakeCaches();
  fetched.length = 0;
});

const modelFetches = () => fetched.filter((r) => r.path === '/models/default.cact').length;

async function storedEntry() {
  const cache = await caches.open(CACHE_NAME);
  return cache.entries.get(url);
}

test('a download is stored with its length and hash, and the next load reads the cache without fetching', async () => {
  const first = await fetchModel(url);
  assert.equal(first.from, 'network');
  assert.deepEqual(Buffer.from(first.bytes), BODY);
  assert.equal(first.sha256, SHA);
  const entry = await storedEntry();
  const headers = Object.fromEntries(entry.headers);
  assert.equal(headers['x-needle-length'], String(BODY.length));
  assert.equal(headers['x-needle-sha256'], SHA);

  const second = await fetchModel(url);
  assert.equal(second.from, 'cache');
  assert.deepEqual(Buffer.from(second.bytes), BODY);
  assert.equal(modelFetches(), 1);
});

test('a truncated cached copy is evicted and fetched again', async () => {
  await fetchModel(url);
  const entry = await storedEntry();
  entry.body = entry.body.slice(0, 1000);
  const again = await fetchModel(url);
  assert.equal(again.from, 'network');
  assert.deepEqual(Buffer.from(again.bytes), BODY);
  assert.equal(modelFetches(), 2);
  assert.equal((await storedEntry()).body.length, BODY.length, 'the refetched copy replaces the damaged one');
});

test('a corrupted cached copy of the right length is evicted and fetched again', async () => {
  await fetchModel(url);
  const entry = await storedEntry();
  entry.body[12345] ^= 0xff;
  const again = await fetchModel(url);
  assert.equal(again.from, 'network');
  assert.equal(again.sha256, SHA);
  assert.equal(modelFetches(), 2);
});

test('a cached copy that does not match the requested integrity is refetched', async () => {
  const other = randomBytes(16);
  const cache = await caches.open(CACHE_NAME);
  const otherSha = createHash('sha256').update(other).digest('hex');
  await cache.put(url, new Response(other, { headers: { 'x-needle-length': '16', 'x-needle-sha256': otherSha } }));
  const got = await fetchModel(url, { integrity: SHA });
  assert.equal(got.from, 'network');
  assert.equal(got.sha256, SHA);
});

test('a download that does not match the integrity rejects with code integrity and is not stored', async () => {
  const wrong = '0'.repeat(64);
  await assert.rejects(fetchModel(url, { integrity: wrong }), { name: 'NeedleError', code: 'integrity' });
  assert.equal(await isCached(url), false);
});

test('integrity is accepted as hex, sha256:hex and sha256-base64 (SRI)', async () => {
  const b64 = createHash('sha256').update(BODY).digest('base64');
  assert.equal(integrityHex(SHA.toUpperCase()), SHA);
  assert.equal(integrityHex(`sha256:${SHA}`), SHA);
  assert.equal(integrityHex(`sha256-${b64}`), SHA);
  assert.throws(() => integrityHex('md5-abc'), { code: 'invalid_argument' });
  const got = await fetchModel(url, { integrity: `sha256-${b64}` });
  assert.equal(got.sha256, SHA);
});

test('download progress rises to the total size', async () => {
  const seen = [];
  await fetchModel(url, { onProgress: (p) => seen.push(p) });
  assert.ok(seen.length >= 2);
  assert.ok(seen.every((p) => p.phase === 'download'));
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].loaded >= seen[i - 1].loaded);
  const last = seen.at(-1);
  assert.equal(last.loaded, BODY.length);
  assert.equal(last.total, BODY.length);
});

test('a missing URL rejects with fetch_failed and the HTTP status', async () => {
  await assert.rejects(fetchModel(`${server.url}models/nope.cact`), { code: 'fetch_failed', status: 404 });
});

test('cache: false neither reads nor writes the cache', async () => {
  await fetchModel(url, { cache: false });
  assert.equal(await isCached(url), false);
});

test('cacheUsage lists stored models with their sizes and evict removes them', async () => {
  await fetchModel(url);
  const usage = await cacheUsage();
  assert.equal(usage.backend, 'cache-api');
  assert.equal(usage.models.length, 1);
  assert.equal(usage.models[0].url, url);
  assert.equal(usage.models[0].bytes, BODY.length);
  assert.equal(usage.models[0].sha256, SHA);
  assert.equal(usage.bytes, BODY.length);
  assert.equal(await evict(url), true);
  assert.equal(await isCached(url), false);
  assert.equal((await cacheUsage()).models.length, 0);
});
