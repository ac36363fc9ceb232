// needle.prepare(): the system + tools prefix prefilled ahead of the question, in the engine; a
// complete() sent meanwhile waits for it and runs on from it (usage.cached_tokens) with a fresh
// request's bits; a second prepare is a no-op; conversation() prepares its prefix; an abort stops
// it (before it starts and mid-prefill) and leaves the engine answering as a fresh one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { Needle } from '../../pkg/index.js';
import { SMART_HOME_TOOLS, defaultModel } from './helpers.mjs';

const BYTES = readFileSync(defaultModel());
const ENV = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
const PREFIX = { tools: ENV.tools, system: ENV.system };
const QUERY = 'Turn off the kitchen lights and dim the bedroom to 30 percent';
const OPTS = { ...PREFIX, maxTokens: 24 };

const load = (options = {}) => Needle.load(new Uint8Array(BYTES), options);
let fresh; // a fresh request's answer, from an engine that never prepared anything

before(async () => {
  const n = await load({ snapshots: false });
  fresh = await n.complete(QUERY, OPTS);
  n.dispose();
  assert.equal(fresh.usage.cached_tokens, 0);
});

/** Same tokens and confidence (bit for bit: one build) as the fresh request's. */
function sameAsFresh(r, label) {
  assert.deepEqual(r.tokens, fresh.tokens, `${label}: tokens`);
  assert.equal(r.confidence, fresh.confidence, `${label}: confidence`);
  assert.deepEqual(r.function_calls, fresh.function_calls, `${label}: calls`);
}

let needle;
before(async () => {
  needle = await load();
});
after(() => needle.dispose());

test('a complete() sent while prepare() runs waits and runs on from its prefix', async () => {
  const prepared = needle.prepare(PREFIX);
  const r = await needle.complete(QUERY, OPTS);
  const p = await prepared;
  assert.equal(p.snapshot, 'prefilled', 'no storage in Node: prefilled, not kept');
  assert.ok(p.tokens > 50, `the preset's prefix is ${p.tokens} tokens`);
  assert.equal(r.usage.cached_tokens, p.tokens, 'the request ran only its own tokens');
  assert.equal(r.snapshot, null, 'nothing was stored or loaded');
  sameAsFresh(r, 'after prepare');
  // The request kept that prefix: preparing it again does nothing.
  assert.deepEqual(await needle.prepare(PREFIX), { snapshot: 'held', tokens: null });
  const again = await needle.complete('Lock the front door', OPTS);
  assert.ok(again.usage.cached_tokens >= p.tokens);
});

test('prepare() of a prefix with nothing to keep resolves to null; bad tools reject', async () => {
  assert.deepEqual(await needle.prepare({}), { snapshot: null, tokens: 0 });
  await assert.rejects(needle.prepare({ tools: 42 }), (e) => e.code === 'invalid_argument');
  await assert.rejects(needle.prepare({ tools: '[{' }), (e) => e.code === 'bad_json');
});

test('conversation() prepares its prefix on creation', async () => {
  await needle.reset();
  const convo = needle.conversation({ ...PREFIX, autoDate: false });
  assert.equal((await needle.prepare(PREFIX)).snapshot, 'held', 'already prepared');
  const r = await convo.send(QUERY, { maxTokens: 24 });
  assert.ok(r.usage.cached_tokens > 50);
  sameAsFresh(r, 'first turn');
});

test('an aborted prepare() rejects and leaves the engine answering as a fresh one', async () => {
  await needle.reset();
  const before = new AbortController();
  before.abort();
  await assert.rejects(needle.prepare(PREFIX, { signal: before.signal }), (e) => e.name === 'AbortError');
  // Mid-prefill: the prefix runs in chunks that start at one token, each followed by a look at
  // the message loop, so an abort sent once the engine has begun stops it part-way.
  const mid = new AbortController();
  const n = await load();
  const t0 = performance.now();
  const p = n.prepare(PREFIX, { signal: mid.signal });
  setTimeout(() => mid.abort(), 5);
  await assert.rejects(p, (e) => e.name === 'AbortError' && e.code === 'aborted');
  const aborted = performance.now() - t0;
  const r = await n.complete(QUERY, OPTS);
  assert.equal(r.usage.cached_tokens, 0, 'nothing of the aborted prefill is reused');
  sameAsFresh(r, 'after an abort');
  // The whole prefill, for scale: the abort came before it could have ended.
  await n.reset();
  const t1 = performance.now();
  assert.equal((await n.prepare(PREFIX)).snapshot, 'prefilled');
  const whole = performance.now() - t1;
  assert.ok(aborted < whole, `aborted after ${aborted.toFixed(0)} ms; the prefill takes ${whole.toFixed(0)}`);
  n.dispose();
});

test('a Needle 2 model has no snapshots: prepare() resolves to null and nothing is stored', async () => {
  const v2 = readFileSync(new URL('../fixtures/v2/mixed_window/model.cact', import.meta.url));
  const stored = new Map();
  const cache = {
    get: async (url) => stored.get(url),
    put: async (url, e) => void stored.set(url, e),
    delete: async (url) => stored.delete(url),
    keys: async () => [...stored.keys()],
  };
  const n = await Needle.load(new Uint8Array(v2), { cache });
  const prefix = { tools: SMART_HOME_TOOLS, system: 'You control the lights.' };
  assert.deepEqual(await n.prepare(prefix), { snapshot: null, tokens: 0 });
  const r = await n.complete('Turn on the kitchen light', { ...prefix, maxTokens: 2 });
  assert.equal(r.snapshot, null);
  assert.equal(stored.size, 0);
  n.dispose();
});

test('a call is posted at once when nothing is before it in the lane, else after it', async () => {
  const posted = [];
  const host = { port: { postMessage: (m) => posted.push(m.type), onmessage: null } };
  const relayed = new Needle(host); // a Needle on a relayed host: snapshots are the engine side's
  relayed.complete('Turn on the lights');
  assert.deepEqual(posted, ['complete'], 'posted before complete() returned');
  relayed.tokenize('queued behind the complete');
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(posted, ['complete'], 'the tokenize waits for the complete');
  host.port.onmessage({ data: { type: 'result', id: 1, value: { timings: { prefill_ms: 0 } } } });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(posted, ['complete', 'tokenize']);
});
