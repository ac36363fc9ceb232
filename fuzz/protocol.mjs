// Fuzz target over the engine's message protocol (issue 51), in Node: random request messages,
// near-valid and hostile, to the engine host's port (worker.js `serve`, as a Web Worker or the
// inline host gets them) and to an extension's shared-engine Port (extension.js, JSON-copied as
// chrome.runtime copies). A finding: a request answered other than once with a result or an
// error of a documented code, an `internal` or `engine_trap` error (a message reached the wasm
// surface unchecked), or an engine that no longer answers a plain request afterwards. Seeded:
// a finding prints its seed and message, and `node fuzz/protocol.mjs SECONDS SEED` replays it.
//   node fuzz/protocol.mjs [SECONDS=20] [SEED=time]
import { readFileSync, existsSync } from 'node:fs';

import { Needle } from '../pkg/index.js';
import { serve } from '../pkg/worker.js';
import { localPorts } from '../pkg/host/local.js';
import { MAX_TEXT } from '../pkg/engine/messages.js';
import { fakeChrome } from '../tests/js/fake-chrome.mjs';

const seconds = Number(process.argv[2] ?? 20);
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
const REPLY_MS = 60_000; // one request's bound: a generation here is a few tokens

const model = ['../pkg/models/default.cact', '../www/models/default.cact']
  .map((p) => new URL(p, import.meta.url))
  .find((u) => existsSync(u));
const MODEL = new Uint8Array(readFileSync(model));

// The codes a request may be refused with; any other (`internal`, `engine_trap`, `disposed`) is a
// finding.
const CODES = new Set([
  'bad_tag',
  'truncated',
  'bad_header',
  'bad_tensor',
  'bad_tokenizer',
  'token_out_of_vocab',
  'context_full',
  'bad_json',
  'invalid_utf8',
  'invalid_argument',
  'unsupported',
  'bad_snapshot',
  'snapshot_mismatch',
  'aborted',
  // A page's loadSnapshot(url) fetches it.
  'bad_source',
  'fetch_failed',
  'too_large',
]);

// mulberry32: small, seeded, good enough to pick shapes.
let state = seed >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
}
const int = (n) => Math.floor(random() * n);
const pick = (xs) => xs[int(xs.length)];
const chance = (p) => random() < p;

const WORDS = ['Turn', 'on', 'the', 'kitchen', 'lights', '<tool_call>', '</tool_call>', '<think>', '<|im_end|>', '{"a":', '\u0000', '\ud800', '日本', '🙂', ' ', '\n'];
const text = (n = 12) => Array.from({ length: int(n) }, () => pick(WORDS)).join(chance(0.5) ? ' ' : '');
const TOOLS = JSON.stringify([
  {
    name: 'set_light',
    description: 'Turn a light on or off.',
    parameters: { type: 'object', properties: { room: { type: 'string' }, on: { type: 'boolean' } }, required: ['room'] },
  },
]);

/** Any value a structured clone or JSON carries, hostile ones included; `depth` bounds nesting. */
function anything(depth = 2) {
  switch (int(depth > 0 ? 16 : 12)) {
    case 0: return pick([0, -1, 1, 7, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, 0.5, -0]);
    case 1: return pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    case 2: return text();
    case 3: return chance(0.1) ? 'x'.repeat(MAX_TEXT + 1) : 'y'.repeat(int(5000));
    case 4: return pick([true, false]);
    case 5: return null;
    case 6: return undefined;
    case 7: return pick([10n ** 30n, -1n, 0n]);
    case 8: return Uint8Array.from({ length: int(300) }, () => int(256));
    case 9: return Uint32Array.from({ length: int(8) }, () => int(2 ** 32));
    case 10: return new Float32Array(int(4));
    case 11: return pick(['f32', 'int8', 'exact', 'deploy', TOOLS, '[]', '{}', '2026-01-01 Thu 10:00']);
    case 12: return Array.from({ length: int(5) }, () => anything(depth - 1));
    case 13: return { length: pick([1e9, -1, 3]) };
    case 14: {
      const o = {};
      for (let i = int(4); i > 0; i--) o[pick(['__proto__', 'constructor', 'toString', 'query', 'tools', 'kv', text(2)])] = anything(depth - 1);
      return o;
    }
    default: return { $typed: pick(['Uint8Array', 'Uint32Array', 'constructor', '__proto__']), values: anything(depth - 1) };
  }
}

const maybe = (valid, p = 0.8) => (chance(p) ? valid() : anything());
const ids = () => Array.from({ length: 1 + int(6) }, () => (chance(0.9) ? int(300) : pick([-1, 1e9, 0.5, Number.NaN])));
const engine = () => ({
  kv: maybe(() => pick([null, 'f32', 'int8'])),
  numerics: maybe(() => pick([null, 'exact', 'deploy'])),
  layers: maybe(() => pick([null, 1, 2, 0, 99])),
});
const prefix = () => ({
  tools: maybe(() => pick([TOOLS, '[]', 'not json'])),
  system: maybe(() => pick([null, text(6)])),
  date: maybe(() => pick([null, '2026-12-04 Fri 10:00', text(3)])),
});
const request = () => {
  const r = { query: maybe(() => text()), tools: maybe(() => pick([TOOLS, '[]'])), maxTokens: maybe(() => int(6)) };
  for (const k of ['temperature', 'seed', 'constrained', 'topK', 'system', text(1)]) if (chance(0.2)) r[k] = anything(1);
  if (typeof r.maxTokens !== 'number' || !(r.maxTokens <= 6)) r.maxTokens = int(6); // keeps each request short
  return r;
};

/** Fields of each request type, near-valid (so messages reach the engine) or hostile. */
const SHAPES = {
  complete: () => ({ engine: maybe(engine, 0.9), request: maybe(request, 0.9) }),
  tokenize: () => ({ text: maybe(() => text()) }),
  detokenize: () => ({ ids: maybe(ids) }),
  render: () => ({ query: maybe(() => text()), tools: maybe(() => TOOLS), system: maybe(() => pick([null, text(4)])) }),
  logits: () => ({ ids: maybe(ids) }),
  prefix: () => ({ ...prefix(), engine: maybe(engine, 0.5) }),
  prepare: () => ({ ...prefix(), key: maybe(() => pick([null, 'ab'.repeat(32)])), snapshot: maybe(() => undefined, 0.6), keep: maybe(() => chance(0.5)) }),
  snapshot: () => ({ bytes: maybe(() => Uint8Array.from({ length: 200 }, () => int(256))) }),
  reset: () => ({}),
  info: () => ({}),
  'relayed-prepare': () => prefix(),
  'relayed-snapshot': () => ({ source: maybe(() => Uint8Array.from({ length: 150 }, () => int(256))) }),
};
// `load` and `dispose` are the client's to send: a fuzzed one would rightly end the model.
const HOST_TYPES = Object.keys(SHAPES).filter((t) => !t.startsWith('relayed-'));
const PAGE_TYPES = ['complete', 'tokenize', 'detokenize', 'render', 'logits', 'reset', 'info', 'relayed-prepare', 'relayed-snapshot'];

/** One random message for `types`, sometimes not a request at all. */
function message(types) {
  if (chance(0.03)) return anything();
  const type = chance(0.95) ? pick(types) : pick(['constructor', 'toString', '__proto__', 'load', 7, null]);
  const fields = SHAPES[type] && Object.hasOwn(SHAPES, type) ? SHAPES[type]() : { x: anything() };
  if (chance(0.05)) fields[pick(Object.keys(fields).concat('extra'))] = anything();
  return { type, ...fields };
}

/** JSON of a message for a report (BigInt and typed arrays shown, long strings cut). */
const show = (m) =>
  JSON.stringify(m, (_k, v) =>
    typeof v === 'bigint' ? `${v}n` : ArrayBuffer.isView(v) ? `${v.constructor.name}(${v.length})` : typeof v === 'string' && v.length > 200 ? `${v.slice(0, 40)}...(${v.length})` : v,
  );

/**
 * Terminal replies (result or error) by id: `wait(id)` resolves to the first for `id` (a request
 * never answered is a finding after REPLY_MS); `count(id)`, how many came.
 */
function replies() {
  const got = new Map(); // id -> [reply]
  const waiting = new Map();
  return {
    add(r) {
      if (r.type !== 'result' && r.type !== 'error') return;
      got.set(r.id, [...(got.get(r.id) ?? []), r]);
      waiting.get(r.id)?.(r);
      waiting.delete(r.id);
    },
    wait: (id) =>
      new Promise((resolve) => {
        if (got.has(id)) return resolve(got.get(id)[0]);
        const timer = setTimeout(() => resolve(null), REPLY_MS);
        waiting.set(id, (r) => (clearTimeout(timer), resolve(r)));
      }),
    count: (id) => (got.get(id) ?? []).length,
    forget: (id) => got.delete(id),
  };
}

/** The engine host behind a raw port, as a Web Worker or the inline host is reached. */
async function hostTarget() {
  const [client, host] = localPorts();
  serve(host);
  const r = replies();
  client.onmessage = ({ data }) => r.add(data);
  let next = 1;
  // A message that is not an object (or has no id) is answered with id null.
  const post = (msg) => {
    const ok = msg !== null && typeof msg === 'object';
    const id = ok ? next++ : null;
    client.postMessage(ok ? { ...msg, id } : msg);
    return id;
  };
  const loaded = await r.wait(post({ type: 'load', source: { kind: 'bytes', bytes: MODEL }, options: {} }));
  if (loaded?.type !== 'result') throw new Error(`load: ${show(loaded)}`);
  return { name: 'host', types: HOST_TYPES, post, replies: r, close: () => post({ type: 'dispose' }) };
}

/** An extension page's Port to the shared engine (JSON-copied, typed arrays as their values). */
async function pageTarget() {
  globalThis.chrome = fakeChrome();
  const ext = await import('../pkg/extension.js');
  let engineNeedle = null;
  ext.serveEngine(() => (engineNeedle ??= Needle.load(MODEL, { worker: false })));
  const port = chrome.runtime.connect({ name: 'needle-web-engine' });
  const r = replies();
  port.onMessage.addListener((m) => r.add(m));
  let next = 1;
  const asJson = (_k, v) =>
    typeof v === 'bigint' ? Number(v) : ArrayBuffer.isView(v) ? { $typed: v.constructor.name, values: Array.from(v) } : v;
  const post = (msg) => {
    const ok = msg !== null && typeof msg === 'object';
    const id = ok ? next++ : null;
    port.postMessage(JSON.parse(JSON.stringify(ok ? { ...msg, id } : { value: msg, id }, asJson) ?? 'null'));
    return id;
  };
  const close = async () => (port.disconnect(), (await engineNeedle)?.dispose());
  return { name: 'extension', types: PAGE_TYPES, post, replies: r, close };
}

function finding(target, why, msg, reply) {
  console.error(`fuzz protocol: FINDING on the ${target.name} (seed ${seed}): ${why}`);
  console.error(`  message: ${show(msg)}`);
  console.error(`  reply:   ${show(reply)}`);
  process.exit(1);
}

/** A reply's type and value, comparable across ids (typed arrays by their values). */
const answer = (r) =>
  r && `${r.type}:${JSON.stringify(ArrayBuffer.isView(r.value) ? Array.from(r.value) : (r.value ?? r.error))}`;
const ALIVE = { type: 'tokenize', text: 'Turn on the kitchen lights' };

const targets = [await hostTarget(), await pageTarget()];
const baseline = new Map();
for (const t of targets) baseline.set(t, answer(await t.replies.wait(t.post(ALIVE))));
const end = Date.now() + seconds * 1000;
const counts = new Map();
let sent = 0;
while (Date.now() < end) {
  const t = targets[sent % targets.length];
  const msg = message(t.types);
  const id = t.post(msg);
  sent += 1;
  const r = await t.replies.wait(id);
  if (!r) finding(t, `no answer in ${REPLY_MS} ms`, msg, r);
  const code = r.type === 'error' ? r.error?.code : 'result';
  if (r.type === 'error' && !CODES.has(code)) finding(t, `refused with code ${code}`, msg, r);
  counts.set(code, (counts.get(code) ?? 0) + 1);
  // Requests are answered in order: once this one is, every reply to `msg` has come.
  const aliveId = t.post(ALIVE);
  const alive = await t.replies.wait(aliveId);
  if (answer(alive) !== baseline.get(t)) finding(t, 'the engine no longer answers as before', msg, alive);
  if (t.replies.count(id) !== 1) finding(t, `${t.replies.count(id)} answers`, msg, r);
  t.replies.forget(id);
  t.replies.forget(aliveId);
}
for (const t of targets) await t.close();
const summary = [...counts]
  .sort((a, b) => b[1] - a[1])
  .map(([c, n]) => `${c} ${n}`)
  .join(', ');
console.log(`fuzz protocol: ${sent} messages in ${seconds} s (seed ${seed}), no finding; answers: ${summary}`);
process.exit(0);
