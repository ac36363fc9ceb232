// Models by name (pkg/models.js) against a local server with the Hugging Face Hub's layout
// (hub-server.mjs: listing, resolve redirects, Range, CORS), never the network: 'needle3',
// 'needle2', 'owner/repo' (its one .cact, or { file }), `revision`, the `modelHost` option and the
// package-level `Needle.modelHost`, then the same storage, resume and integrity path as any URL.
// Also `Needle.download`, the prefetch that fills storage without starting an engine.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle, NeedleError } from '../../pkg/index.js';
import { CACHE_NAME } from '../../pkg/storage/index.js';
import { isModelName } from '../../pkg/models.js';
import { FakeCaches, defaultModel } from './helpers.mjs';
import { startHub } from './hub-server.mjs';

const MODEL = new Uint8Array(readFileSync(defaultModel()));
const OTHER = MODEL.slice(); // the same model under another name and revision
let hub;

before(async () => {
  hub = await startHub({
    'Cactus-Compute/needle3': { main: { 'needle3.cact': MODEL, 'README.md': new TextEncoder().encode('# needle3') } },
    'Cactus-Compute/needle2': { main: { 'needle2.cact': MODEL } },
    'someone/tuned': { main: { 'tuned.cact': MODEL }, v2: { 'tuned-v2.cact': OTHER } },
    'someone/two': { main: { 'a.cact': MODEL, 'b.cact': MODEL } },
    'someone/none': { main: { 'config.json': new TextEncoder().encode('{}') } },
  });
});
after(() => hub.close());
beforeEach(() => {
  hub.requests.length = 0;
  Needle.modelHost = null;
  delete globalThis.caches;
});

const paths = () => hub.requests.map((r) => `${r.status} ${r.path}${r.range ? ` ${r.range}` : ''}`);

/** Loads `name`, returns what the engine saw and what the hub served. */
async function loadNamed(name, options = {}) {
  const needle = await Needle.load(name, { modelHost: hub.url, cache: 'none', ...options });
  try {
    return { info: needle.info, ids: Array.from(await needle.tokenize('turn on the lights')), served: paths() };
  } finally {
    needle.dispose();
  }
}

test('names and URLs are told apart', () => {
  for (const name of ['needle3', 'needle2', 'Cactus-Compute/needle3', 'some-one/my.model_v2']) assert.equal(isModelName(name), true, name);
  for (const url of ['needle4', 'models/default.cact', './a/b', '/a/b', 'https://x.test/a/b', 'a/b/c', new URL('https://x.test/a')]) {
    assert.equal(isModelName(url), false, String(url));
  }
});

test("'needle3' and 'needle2' load upstream's files through the Hub's resolve URL", async () => {
  const three = await loadNamed('needle3');
  assert.deepEqual(three.served, [`302 /Cactus-Compute/needle3/resolve/main/needle3.cact`, `200 /blobs/${hub.sha256(MODEL)}`]);
  assert.equal(three.info.bytes, MODEL.length);
  assert.equal(three.info.source, 'network');
  hub.requests.length = 0;
  const two = await loadNamed('needle2', { revision: 'main' });
  assert.deepEqual(two.served[0], '302 /Cactus-Compute/needle2/resolve/main/needle2.cact');
  assert.deepEqual(two.ids, three.ids);
});

test("'owner/repo' loads the repository's one .cact, listed once; { file } and revision name others", async () => {
  const listed = await loadNamed('someone/tuned');
  assert.deepEqual(listed.served, ['200 /api/models/someone/tuned/tree/main', '302 /someone/tuned/resolve/main/tuned.cact', `200 /blobs/${hub.sha256(MODEL)}`]);
  hub.requests.length = 0;
  const pinned = await loadNamed('someone/tuned', { revision: 'v2' });
  assert.equal(pinned.served[1], '302 /someone/tuned/resolve/v2/tuned-v2.cact');
  hub.requests.length = 0;
  const chosen = await loadNamed('someone/two', { file: 'b.cact' });
  assert.deepEqual(chosen.served[0], '302 /someone/two/resolve/main/b.cact', 'a named file needs no listing');
});

test('a repository with several .cact files, none, or no such repository: a clear NeedleError', async () => {
  await assert.rejects(loadNamed('someone/two'), (e) => {
    assert.ok(e instanceof NeedleError);
    assert.equal(e.code, 'bad_source');
    assert.match(e.message, /someone\/two at main has 2 \.cact files \(a\.cact, b\.cact\): name one with \{ file \}/);
    assert.deepEqual(e.files, ['a.cact', 'b.cact']);
    return true;
  });
  await assert.rejects(loadNamed('someone/none'), { code: 'bad_source', message: /someone\/none at main has no \.cact file/ });
  await assert.rejects(loadNamed('nobody/here'), { code: 'fetch_failed', status: 404 });
  await assert.rejects(loadNamed('needle3', { revision: 'nope' }), { code: 'fetch_failed', status: 404 });
});

test('the package-level host, and the option over it', async () => {
  Needle.modelHost = `${hub.url}/`;
  assert.equal(Needle.modelHost, hub.url);
  const needle = await Needle.load('needle3', { cache: 'none' });
  needle.dispose();
  assert.equal(paths()[0], '302 /Cactus-Compute/needle3/resolve/main/needle3.cact');
  Needle.modelHost = null;
  assert.equal(Needle.modelHost, 'https://huggingface.co');
});

test('a cut download resumes with Range across the redirect; a wrong integrity is refused', async () => {
  const blob = `/blobs/${hub.sha256(MODEL)}`;
  hub.cutOnce(blob, 100_000);
  const infos = [];
  const r = await loadNamed('needle3', { logLevel: 'info', logger: { info: (m) => infos.push(m), warn() {}, error() {}, debug() {} } });
  assert.equal(r.info.bytes, MODEL.length);
  const resume = [`302 /Cactus-Compute/needle3/resolve/main/needle3.cact bytes=100000-`, `206 ${blob} bytes=100000-`];
  assert.deepEqual(r.served.slice(-2), resume);
  assert.ok(infos.some((m) => m.includes('resuming at byte 100000')), infos.join('\n'));
  await assert.rejects(loadNamed('needle3', { integrity: '0'.repeat(64) }), { code: 'integrity' });
});

test('Needle.download fills storage; load, cached and evict then take the name without the network', async () => {
  globalThis.caches = new FakeCaches();
  const seen = [];
  const got = await Needle.download('needle3', { modelHost: hub.url, onProgress: (p) => seen.push(p) });
  const url = `${hub.url}/Cactus-Compute/needle3/resolve/main/needle3.cact`;
  assert.equal(got.url, url);
  assert.equal(got.from, 'network');
  assert.equal(got.storage, 'cache-api');
  assert.equal(got.sha256, hub.sha256(MODEL));
  assert.deepEqual(got.bytes, MODEL);
  assert.ok(seen.length > 0 && seen.at(-1).loaded === MODEL.length && seen.every((p) => p.phase === 'download'));
  assert.ok((await caches.open(CACHE_NAME)).entries.has(url));
  assert.equal(await Needle.cached('needle3', { modelHost: hub.url }), true);
  hub.requests.length = 0;
  const again = await Needle.download('needle3', { modelHost: hub.url, integrity: got.sha256 });
  assert.equal(again.from, 'cache');
  assert.deepEqual(paths(), [], 'a stored model is not fetched again');
  assert.equal(await Needle.evict('needle3', { modelHost: hub.url }), true);
  assert.equal(await Needle.cached('needle3', { modelHost: hub.url }), false);
  await assert.rejects(Needle.download(new Uint8Array(4)), { code: 'bad_source' });
  await assert.rejects(Needle.download('needle3', { modelHost: hub.url, cache: 'none', signal: AbortSignal.abort() }), { code: 'aborted' });
});
