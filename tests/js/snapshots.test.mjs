// Persisted prefix snapshots through the package's storage (here the caller's store, as Node has
// no Cache Storage): a prefilled system + tools prefix is stored; a later load's request loads it
// instead of prefilling, with a fresh prefill's tokens and confidence; a corrupt, truncated or
// mismatched one is ignored with a warning and the prefix prefilled (and stored again); only the
// system + tools prefix is ever stored; a byte budget evicts the least recently used; cacheUsage
// lists them, evict drops them, `snapshots: false` keeps none. Snapshots made ahead of time by the
// native CLI (`needle snapshot`) come in through `snapshots: [...]` and `loadSnapshot()` with the
// same bits. Needs the native CLI (NEEDLE_CLI, default target/release/needle).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, test } from 'node:test';

import { Needle } from '../../pkg/index.js';
import { memoryStore, snapshotsIn } from './memory-store.mjs';
import { cli, defaultModel, tempDir } from './helpers.mjs';

const MODEL = defaultModel();
const BYTES = readFileSync(MODEL);
const preset = (name) =>
  JSON.parse(readFileSync(new URL(`../../www/presets/${name}.json`, import.meta.url), 'utf8'));
const ENV = preset('smart_home');
const OPTS = { tools: ENV.tools, system: ENV.system, maxTokens: 24 };
const QUERY = 'Turn off the kitchen lights and dim the bedroom to 30 percent';


/** A logger that keeps its warnings. */
function collector() {
  const warnings = [];
  return { warnings, warn: (m) => warnings.push(m) };
}

const load = (options = {}) => Needle.load(new Uint8Array(BYTES), options);

let fresh; // the request's answer on an engine that never used a snapshot
let native; // kv -> the CLI's snapshot of the smart_home preset
before(async () => {
  const n = await load({ snapshots: false });
  fresh = await n.complete(QUERY, OPTS);
  n.dispose();
  native = {};
  for (const kv of ['int8', 'f32']) {
    const out = join(tempDir(), `smart_home-${kv}.snap`);
    cli(['snapshot', '--model', MODEL, '--preset', 'smart_home', '--kv', kv, '--out', out]);
    native[kv] = { file: out, bytes: new Uint8Array(readFileSync(out)) };
  }
});

function sameAsFresh(r, label) {
  assert.deepEqual(r.tokens, fresh.tokens, `${label}: tokens`);
  assert.equal(r.confidence, fresh.confidence, `${label}: confidence`);
  assert.equal(r.text, fresh.text, `${label}: text`);
}

test('a stored snapshot is loaded by the next load instead of prefilling, with the same bits', async () => {
  const store = memoryStore();
  const first = await load({ cache: store });
  const made = await first.complete(QUERY, OPTS);
  assert.equal(made.snapshot, 'saved');
  sameAsFresh(made, 'the request that made it');
  // Its prefill counts the prefix it prefilled before its own ~10 tokens (a fresh request's
  // prefill, give or take: not a tenth of it).
  assert.ok(made.timings.prefill_ms > fresh.timings.prefill_ms / 3, `${made.timings.prefill_ms} ms`);
  first.dispose();
  const [[url, entry]] = snapshotsIn(store);
  const n = new DataView(entry.bytes.buffer, entry.bytes.byteOffset).getUint32(128, true);

  const second = await load({ cache: store });
  const r = await second.complete(QUERY, OPTS);
  assert.equal(r.snapshot, 'loaded');
  assert.equal(r.usage.cached_tokens, n, 'the request ran on from the snapshot');
  sameAsFresh(r, 'loaded');
  // A prepare() finds it held; a second request still reports where its prefix came from.
  assert.equal((await second.prepare(OPTS)).snapshot, 'held');
  assert.equal((await second.complete(QUERY, OPTS)).snapshot, 'loaded');
  second.dispose();

  // prepare() on a third load loads it too, and the request after it runs on from it.
  const third = await load({ cache: store });
  assert.deepEqual(await third.prepare(OPTS), { snapshot: 'loaded', tokens: n });
  const after = await third.complete(QUERY, OPTS);
  assert.equal(after.usage.cached_tokens, n);
  sameAsFresh(after, 'prepared from the snapshot');
  third.dispose();
  assert.deepEqual(snapshotsIn(store).map(([u]) => u), [url], 'still one snapshot');
});

test('a corrupt, truncated or mismatched stored snapshot is ignored with a warning and prefilled', async () => {
  const store = memoryStore();
  const maker = await load({ cache: store });
  await maker.prepare(OPTS);
  maker.dispose();
  const [[url, good]] = snapshotsIn(store);
  const flipped = good.bytes.slice();
  flipped[flipped.length - 100] ^= 0x10;
  // The f32 snapshot of the same prefix, put where the int8 engine looks for its own.
  const cases = [
    ['flipped byte', flipped, 'bad_snapshot'],
    ['truncated', good.bytes.slice(0, good.bytes.length - 1), 'bad_snapshot'],
    ['other KV precision', native.f32.bytes, 'snapshot_mismatch'],
    ['not a snapshot', BYTES.subarray(0, 4096), 'bad_snapshot'],
  ];
  for (const [what, bytes, code] of cases) {
    store.entries.set(url, { bytes: new Uint8Array(bytes), sha256: null, cachedAt: 1 });
    const log = collector();
    const n = await load({ cache: store, logger: log });
    const r = await n.complete(QUERY, OPTS);
    n.dispose();
    assert.equal(r.snapshot, 'saved', `${what}: prefilled and stored again`);
    sameAsFresh(r, what);
    assert.equal(log.warnings.length, 1, `${what}: ${log.warnings}`);
    assert.match(log.warnings[0], new RegExp(`not used \\(${code}`), what);
    assert.ok(Buffer.from(store.entries.get(url).bytes).equals(Buffer.from(good.bytes)), what);
  }
});

test('only the system + tools prefix is ever stored, never a query or turns', async () => {
  const store = memoryStore();
  const n = await load({ cache: store });
  await n.complete(QUERY, OPTS);
  await n.complete('Play some jazz in the living room please', OPTS);
  const convo = n.conversation({ ...OPTS, autoDate: false });
  await convo.send('Open the garage door', { maxTokens: 16 });
  await convo.send('and close it again in ten minutes', { maxTokens: 16 });
  const stored = snapshotsIn(store);
  assert.equal(stored.length, 1, 'one prefix, one snapshot');
  const bytes = stored[0][1].bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const count = view.getUint32(128, true);
  const ids = Array.from({ length: count }, (_, i) => view.getUint32(136 + 4 * i, true));
  const text = await n.detokenize(ids);
  assert.ok(text.includes(ENV.tools[0].function?.name ?? ENV.tools[0].name), 'the tools are in it');
  for (const said of [QUERY, 'jazz', 'garage', 'ten minutes'])
    assert.ok(!text.includes(said), `"${said}" is not in the snapshot`);
  // The same bytes a prepare() of the prefix alone makes: nothing of the requests reached them.
  const alone = memoryStore();
  const m = await load({ cache: alone });
  await m.prepare({ tools: OPTS.tools, system: OPTS.system });
  assert.ok(Buffer.from(snapshotsIn(alone)[0][1].bytes).equals(Buffer.from(bytes)));
  m.dispose();
  n.dispose();
});

test('a byte budget evicts the least recently used; cacheUsage lists, evict drops; off keeps none', async () => {
  const store = memoryStore();
  const sizes = {};
  for (const name of ['smart_home', 'media_player']) {
    const probe = memoryStore();
    const n = await load({ cache: probe });
    await n.prepare(preset(name));
    n.dispose();
    sizes[name] = snapshotsIn(probe)[0][1].bytes.length;
  }
  const budget = Math.max(sizes.smart_home, sizes.media_player) + 1000;
  const n = await load({ cache: store, snapshotBudget: budget });
  assert.equal((await n.prepare(preset('smart_home'))).snapshot, 'saved');
  assert.equal((await n.prepare(preset('media_player'))).snapshot, 'saved');
  const usage = await Needle.cacheUsage({ cache: store });
  assert.equal(usage.snapshots.length, 1, 'the older one was evicted');
  assert.equal(usage.snapshots[0].bytes, sizes.media_player);
  assert.deepEqual(usage.models, []);
  assert.equal(usage.bytes, sizes.media_player);
  assert.equal(await Needle.evict(usage.snapshots[0].url, { cache: store }), true);
  assert.deepEqual((await Needle.cacheUsage({ cache: store })).snapshots, []);
  n.dispose();

  const off = await load({ cache: store, snapshots: false });
  const r = await off.complete(QUERY, OPTS);
  assert.equal(r.snapshot, null);
  assert.equal(snapshotsIn(store).length, 0, 'snapshots: false stores nothing');
  off.dispose();
});

test("the CLI's snapshot, given to Needle.load or loadSnapshot(), gives a fresh prefill's bits", async () => {
  const count = (b) => new DataView(b.buffer, b.byteOffset).getUint32(128, true);
  const given = await load({ snapshots: [native.int8.bytes] });
  const r = await given.complete(QUERY, OPTS);
  assert.equal(r.snapshot, 'loaded');
  assert.equal(r.usage.cached_tokens, count(native.int8.bytes));
  sameAsFresh(r, 'given at load');
  given.dispose();

  // f32 KV: the CLI's f32 snapshot on an f32 engine, the f32 fresh request's bits.
  const f32 = await load({ kv: 'f32', snapshots: false });
  const freshF32 = await f32.complete(QUERY, OPTS);
  f32.dispose();
  const givenF32 = await load({ kv: 'f32', snapshots: [native.f32.bytes] });
  const rF32 = await givenF32.complete(QUERY, OPTS);
  givenF32.dispose();
  assert.equal(rF32.snapshot, 'loaded');
  assert.equal(rF32.usage.cached_tokens, count(native.f32.bytes));
  assert.deepEqual([rF32.tokens, rF32.confidence], [freshF32.tokens, freshF32.confidence], 'f32');

  // One that cannot be read, or is not a snapshot, is a warning; the load goes on.
  const log = collector();
  const missing = pathToFileURL(join(tempDir(), 'missing.snap')).href;
  const lenient = await load({ snapshots: [missing, BYTES.subarray(0, 300)], logger: log });
  sameAsFresh(await lenient.complete(QUERY, OPTS), 'after unreadable snapshots');
  lenient.dispose();
  assert.equal(log.warnings.length, 2, log.warnings.join('\n'));

  const n = await load({ snapshots: false });
  const url = pathToFileURL(native.int8.file).href;
  assert.deepEqual(await n.loadSnapshot(url), { tokens: count(native.int8.bytes) });
  const after = await n.complete(QUERY, OPTS);
  assert.equal(after.usage.cached_tokens, count(native.int8.bytes));
  assert.equal(after.snapshot, 'loaded');
  sameAsFresh(after, 'loadSnapshot(url)');
  await assert.rejects(n.loadSnapshot(native.f32.bytes), (e) => e.code === 'snapshot_mismatch');
  await assert.rejects(n.loadSnapshot(BYTES.subarray(0, 200)), (e) => e.code === 'bad_snapshot');
  const again = await n.complete(QUERY, OPTS);
  sameAsFresh(again, 'after a refused snapshot');
  n.dispose();
});


test('a prefix with a date fact is prepared but never stored', async () => {
  const store = memoryStore();
  const n = await load({ cache: store });
  const dated = await n.prepare({ ...OPTS, date: '2026-12-03 Thu 12:00' });
  assert.equal(dated.snapshot, 'prefilled');
  const r = await n.complete(QUERY, { ...OPTS, date: '2026-12-03 Thu 12:01' });
  assert.equal(r.snapshot, null);
  assert.equal(snapshotsIn(store).length, 0);
  n.dispose();
});

test('eviction drops the least recently used: loading a snapshot marks it used', async () => {
  const names = ['smart_home', 'media_player', 'wearable'];
  const sizes = {};
  for (const name of names) {
    const probe = memoryStore();
    const n = await load({ cache: probe });
    await n.prepare(preset(name));
    n.dispose();
    sizes[name] = snapshotsIn(probe)[0][1].bytes.length;
  }
  assert.equal(new Set(Object.values(sizes)).size, 3, 'told apart by their sizes');
  const store = memoryStore();
  const snapshotBudget = sizes.smart_home + sizes.media_player + sizes.wearable - 1; // any two fit
  const first = await load({ cache: store, snapshotBudget });
  await first.prepare(preset('smart_home'));
  await first.prepare(preset('media_player'));
  first.dispose();
  const second = await load({ cache: store, snapshotBudget });
  assert.equal((await second.prepare(preset('smart_home'))).snapshot, 'loaded');
  assert.equal((await second.prepare(preset('wearable'))).snapshot, 'saved');
  second.dispose();
  const kept = snapshotsIn(store).map(([, e]) => e.bytes.length).sort();
  assert.deepEqual(kept, [sizes.smart_home, sizes.wearable].sort(), 'media_player, unused longest, went');
});
