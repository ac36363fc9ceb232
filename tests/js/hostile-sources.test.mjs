// Issue 51, defects 2 and 3, against a raw local HTTP server (raw-server.mjs) that answers as a
// hostile or broken host would (an HTML page with 200, a file cut short, a body longer than its
// Content-Length, endless, a Content-Length of 1e12), with an in-memory Cache Storage: a bad
// answer is never served from storage again (refused before it is stored, or evicted once the
// engine refuses its bytes); a download never takes more than its ceiling (`maxBytes`, the Hub
// listing's size, the announced length) and is not retried past it.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { CACHE_NAME } from '../../pkg/storage/index.js';
import { FakeCaches } from './helpers.mjs';
import { octets, routedServer, settle } from './raw-server.mjs';

const MODEL = new Uint8Array(readFileSync(new URL('../../pkg/models/default.cact', import.meta.url)));

const server = routedServer();
beforeEach(() => {
  globalThis.caches = new FakeCaches();
});

const requests = (path) => server.log.filter((r) => r.path === path).length;
const stored = async () => [...(await caches.open(CACHE_NAME)).entries.keys()];
const load = (path, options = {}) => Needle.load(server.url + path, { worker: false, ...options });

test('an HTML page answered with 200 is refused before it is stored; the next load fetches', async () => {
  const page = new TextEncoder().encode('<html>rate limited</html>');
  server.routes['/m.cact'] = (n) =>
    n === 1 ? { body: page, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': page.length } } : octets(MODEL);
  const e = await settle(load('/m.cact'));
  assert.equal(e.code, 'fetch_failed', e.message);
  assert.match(e.message, /web page/);
  assert.deepEqual(await stored(), []);
  const needle = await load('/m.cact');
  assert.equal(needle.info.source, 'network');
  needle.dispose();
  assert.equal(requests('/m.cact'), 2);
});

test('bytes the engine refuses (a file cut short) are evicted; the next load fetches the model', async () => {
  // Whole answers, chunked: nothing tells the cut copy from the file until the engine reads it.
  const cut = MODEL.subarray(0, 300_000);
  server.routes['/cut.cact'] = (n) => (n === 1 ? { body: cut, chunked: true } : octets(MODEL));
  const warnings = [];
  const e = await settle(load('/cut.cact', { logger: { warn: (m) => warnings.push(m) } }));
  assert.ok(['bad_tag', 'truncated', 'bad_header', 'bad_tensor', 'bad_tokenizer'].includes(e.code), `${e.code}: ${e.message}`);
  assert.deepEqual(await stored(), [], 'the refused copy is gone');
  assert.ok(warnings.some((w) => /evicted/.test(w)), warnings.join('\n'));
  const needle = await load('/cut.cact');
  assert.deepEqual([needle.info.source, needle.info.bytes], ['network', MODEL.length]);
  needle.dispose();
  assert.equal(requests('/cut.cact'), 2);
  // Through the caller's store, filled on the client's thread: evicted there too.
  const store = new Map();
  const custom = {
    get: async (u) => store.get(u),
    put: async (u, entry) => void store.set(u, entry),
    delete: async (u) => store.delete(u),
    keys: async () => [...store.keys()],
  };
  server.routes['/cut2.cact'] = () => ({ body: cut, chunked: true });
  const again = await settle(load('/cut2.cact', { cache: custom }));
  assert.match(again.code, /^(bad_|truncated)/, again.message);
  assert.deepEqual([...store.keys()], []);
});

test('a body longer than its Content-Length is refused before it is stored, and not retried', async () => {
  // fetch itself reads no more than the header says; a `fetch` function can answer anything.
  let calls = 0;
  const fetch = async () => (
    calls++,
    new Response(MODEL, { headers: { 'content-type': 'application/octet-stream', 'content-length': '300000' } })
  );
  const e = await settle(load(`/long.cact`, { fetch, cache: 'cache-api' }));
  assert.equal(e.code, 'fetch_failed', e.message);
  assert.match(e.message, /longer than the 300000 bytes/);
  assert.equal(calls, 1);
  assert.deepEqual(await stored(), []);
});

test('an endless body stops at maxBytes with too_large, once; the memory it held is bounded by it', { timeout: 60_000 }, async () => {
  server.routes['/endless.cact'] = () => ({ endless: true, headers: { 'Content-Type': 'application/octet-stream' } });
  const maxBytes = 4 * 1024 * 1024;
  const e = await settle(load('/endless.cact', { maxBytes }));
  assert.equal(e.code, 'too_large', e.message);
  assert.equal(e.maxBytes, maxBytes);
  assert.equal(requests('/endless.cact'), 1, 'not retried');
  await new Promise((r) => setTimeout(r, 100));
  const [entry] = server.log;
  assert.ok(entry.closed, 'the client closed the connection');
  // What the server could write before the client stopped: the ceiling and the sockets' buffers.
  assert.ok(entry.sent < maxBytes + 16 * 1024 * 1024, `${entry.sent} bytes sent`);
  assert.deepEqual(await stored(), []);
});

test('Content-Length: 1e12 is refused at once (the 2 GiB default), not believed or retried', { timeout: 60_000 }, async () => {
  server.routes['/huge.cact'] = () => ({
    endless: true,
    headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': '1000000000000' },
  });
  const progress = [];
  const e = await settle(load('/huge.cact', { onProgress: (p) => progress.push(p) }));
  assert.equal(e.code, 'too_large', e.message);
  assert.equal(e.maxBytes, 2 ** 31);
  assert.equal(requests('/huge.cact'), 1);
  assert.ok(!progress.some((p) => p.total === 1e12), 'the announced length never reached progress');
  for (const bad of [0, -1, 1.5, '1000', Number.NaN]) {
    assert.equal((await settle(load('/huge.cact', { maxBytes: bad }))).code, 'invalid_argument', String(bad));
  }
});

test("a Hub listing's size is the ceiling of a named model's download", { timeout: 60_000 }, async () => {
  server.routes['/api/models/o/listed/tree/main'] = () => {
    const body = new TextEncoder().encode(JSON.stringify([{ type: 'file', path: 'm.cact', size: 1000 }]));
    return { body, headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } };
  };
  server.routes['/o/listed/resolve/main/m.cact'] = () => ({ body: MODEL, chunked: true });
  const e = await settle(Needle.load('o/listed', { modelHost: server.url, worker: false, cache: 'none' }));
  assert.equal(e.code, 'too_large', e.message);
  assert.equal(e.maxBytes, 1000);
  const got = await settle(Needle.download('o/listed', { modelHost: server.url, cache: 'none' }));
  assert.equal(got.code, 'too_large');
});

test('an announced length this thread cannot hold is a typed error, not a RangeError', async () => {
  let cancelled = false;
  const body = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(16)), cancel: () => void (cancelled = true) });
  const fetch = async () => new Response(body, { headers: { 'content-length': String(2 ** 45) } });
  const e = await settle(Needle.download(`${server.url}/held.cact`, { fetch, cache: 'none', maxBytes: 2 ** 50 }));
  assert.equal(e.code, 'fetch_failed', e.message);
  assert.match(e.message, /cannot be held/);
  assert.ok(cancelled, 'the body is cancelled');
});
