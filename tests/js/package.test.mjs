// The npm package on the real wasm builds (a worker_threads host in Node): parity with the native CLI,
// streaming, abort, queueing, typed errors and load sources.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Needle, NeedleError } from '../../pkg/index.js';
import { startServer } from '../../tools/serve.mjs';
import { assertSameAsNative, caseOf, defaultModel, nativeChat, nativeRun, nativeLogits, SMART_HOME_TOOLS } from './helpers.mjs';

const MODEL = defaultModel();
const BYTES = new Uint8Array(readFileSync(MODEL));
const QUERY = 'Turn on the kitchen light';
let needle; // SIMD build
let server;

before(async () => {
  needle = await Needle.load(BYTES);
  server = await startServer({ port: 0, model: MODEL });
});
after(async () => {
  needle.dispose();
  await server.close();
});

test('the SIMD128 build runs where WebAssembly validates SIMD, the baseline build when asked', async () => {
  assert.equal(needle.info.thread, 'worker', 'in Node the engine runs in a worker_threads Worker');
  assert.equal(needle.info.variant, 'simd');
  const base = await Needle.load(BYTES, { simd: false });
  try {
    assert.equal(base.info.variant, 'baseline');
  } finally {
    base.dispose();
  }
});

test('both wasm builds generate the same tokens and result as the native CLI for the same input', async () => {
  const native = nativeRun(MODEL, QUERY, SMART_HOME_TOOLS, ['--max-tokens', '24']);
  const base = await Needle.load(BYTES, { simd: false });
  try {
    assertSameAsNative(await base.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 24 }), native, true);
    assertSameAsNative(await needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 24 }), native, false);
  } finally {
    base.dispose();
  }
});

test('a Needle 2 container loads (generation read from the bytes) and generates what the native CLI does', async () => {
  const v2 = new URL('../fixtures/v2/mixed_window/model.cact', import.meta.url);
  const native = nativeRun(v2.pathname, QUERY, SMART_HOME_TOOLS, ['--max-tokens', '12']);
  const model = await Needle.load(new Uint8Array(readFileSync(v2)));
  try {
    assert.equal(model.info.generation, 2);
    assertSameAsNative(await model.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 12 }), native, false);
  } finally {
    model.dispose();
  }
});

test('constrained decoding in wasm masks the same tokens as the native CLI', async () => {
  // Random weights wander far outside the format unless constrained, so the mask is exercised.
  const fixture = new URL('../fixtures/v3/local_global_taps/model.cact', import.meta.url);
  const tools = JSON.stringify([{ name: 'lock_door', parameters: { type: 'object',
    properties: { door: { type: 'string', enum: ['front', 'back'] }, minutes: { type: 'integer' } }, required: ['door'] } }]);
  const extra = ['--max-tokens', '40', '--temperature', '0.8', '--seed', '5'];
  const native = nativeRun(fixture.pathname, QUERY, tools, [...extra, '--constrained']);
  const free = nativeRun(fixture.pathname, QUERY, tools, extra);
  // The baseline build's logits equal the CLI's bit for bit, so sampling agrees exactly too.
  const model = await Needle.load(new Uint8Array(readFileSync(fixture)), { simd: false });
  try {
    const opts = { tools, maxTokens: 40, temperature: 0.8, seed: 5, constrained: true };
    assertSameAsNative(await model.complete(QUERY, opts), native, false);
    assert.ok(native.text.trimStart().startsWith('<'), native.text);
    assert.notDeepEqual(native.tokens, free.tokens, 'the constraint changes what random weights write');
  } finally {
    model.dispose();
  }
});

test('extractive decoding in wasm copies from the query as the native CLI does', async () => {
  const fixture = new URL('../fixtures/v3/local_global_taps/model.cact', import.meta.url);
  const tools = JSON.stringify([{ name: 'add_note', parameters: { type: 'object',
    properties: { text: { type: 'string', minLength: 1, maxLength: 30 } }, required: ['text'] } }]);
  const query = 'Note that the Blue door sticks';
  const extra = ['--max-tokens', '96', '--temperature', '0.8', '--seed', '1'];
  const native = nativeRun(fixture.pathname, query, tools, [...extra, '--extractive']);
  const constrained = nativeRun(fixture.pathname, query, tools, [...extra, '--constrained']);
  const model = await Needle.load(new Uint8Array(readFileSync(fixture)), { simd: false });
  try {
    const r = await model.complete(query, { tools, maxTokens: 96, temperature: 0.8, seed: 1, extractive: true });
    assertSameAsNative(r, native, false);
    assert.notDeepEqual(native.tokens, constrained.tokens, 'extraction changes what random weights write');
    assert.ok(r.function_calls.length > 0, r.text);
    for (const call of r.function_calls) {
      assert.ok(query.toLowerCase().includes(call.arguments.text.toLowerCase()), call.arguments.text);
    }
  } finally {
    model.dispose();
  }
});

test('value search in wasm rewinds the KV cache and chooses the values the native CLI does', async () => {
  const env = JSON.parse(readFileSync(new URL('../../www/presets/productivity.json', import.meta.url), 'utf8'));
  const tools = JSON.stringify(env.tools);
  const query = 'Remind me to call the dentist about the crown tomorrow at 9am';
  const flags = ['--system', env.system, '--extractive'];
  const native = nativeRun(MODEL, query, tools, [...flags, '--value-search']);
  const base = await Needle.load(BYTES, { simd: false });
  try {
    const opts = { tools, system: env.system, extractive: true, valueSearch: true };
    assertSameAsNative(await base.complete(query, opts), native, true);
    assertSameAsNative(await needle.complete(query, opts), native, false);
    assert.ok(native.function_calls.length > 0, native.text);
    await assert.rejects(needle.complete(query, { ...opts, temperature: 0.5 }), { code: 'invalid_argument' });
  } finally {
    base.dispose();
  }
});

test('wasm logits equal the native CLI logits: bit for bit on the baseline build, within 1e-5 on SIMD', async () => {
  const ids = Array.from(await needle.tokenize('<|im_start|>user\nhello world')).slice(0, 24);
  const native = nativeLogits(MODEL, ids);
  const base = await Needle.load(BYTES, { simd: false });
  try {
    const b = await base.logits(ids);
    assert.equal(b.length, native.length);
    assert.deepEqual(b, native);
  } finally {
    base.dispose();
  }
  const s = await needle.logits(ids);
  assert.equal(s.length, native.length);
  const scale = native.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const worst = s.reduce((m, v, i) => Math.max(m, Math.abs(v - native[i])), 0);
  assert.ok(worst <= 1e-5 * scale, `max |simd - native| = ${worst} (scale ${scale})`);
});

test('per-request layers, kv and numerics match the CLI with the same flags, and hold for that request only', async () => {
  // A committed fixture with a depth-ladder rung, so this runs whatever the default model is.
  const fixture = fileURLToPath(new URL('../fixtures/v3/eos_confidence_rung/model.cact', import.meta.url));
  const [rung] = caseOf(fixture).rungs;
  const depth = rung.depth;
  const flags = ['--layers', String(depth), '--kv', 'f32', '--numerics', 'deploy'];
  const native = nativeRun(fixture, QUERY, SMART_HOME_TOOLS, ['--max-tokens', '12', ...flags]);
  const opts = { tools: SMART_HOME_TOOLS, maxTokens: 12 };
  const model = await Needle.load(new Uint8Array(readFileSync(fixture)));
  try {
    const plain = await model.complete(QUERY, opts);
    const shallow = await model.complete(QUERY, { ...opts, layers: depth, kv: 'f32', numerics: 'deploy' });
    assertSameAsNative(shallow, native, false);
    assert.notDeepEqual(shallow.tokens, plain.tokens, 'the rung changes the output');
    assert.deepEqual((await model.complete(QUERY, opts)).tokens, plain.tokens, 'the next request is back to the load options');
  } finally {
    model.dispose();
  }
});

test('turns and date reach the core: a conversation answers as needle chat does, reusing the cached prefix', async () => {
  const date = '2026-12-02 Wed 06:45';
  const lines = [QUERY, 'now turn it off again'];
  const native = nativeChat(MODEL, lines, SMART_HOME_TOOLS, ['--max-tokens', '24', '--date', date]);
  const turns = [];
  for (const [i, query] of lines.entries()) {
    const r = await needle.complete(query, { tools: SMART_HOME_TOOLS, maxTokens: 24, date, turns });
    assertSameAsNative(r, native[i], false);
    if (i > 0) assert.ok(r.usage.cached_tokens > 0, "the second turn reuses the first");
    turns.push({ role: 'user', content: query }, { role: 'assistant', content: r.text });
  }
  await assert.rejects(needle.complete('x', { turns: [{ role: 'bot', content: 'hi' }] }), { code: 'invalid_argument' });
  await assert.rejects(needle.complete('x', { date: 'tomorrow' }), { code: 'invalid_argument' });
});

test('stream yields every token as it is generated, then the final result', async () => {
  const full = await needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 16 });
  const chunks = [];
  let final = null;
  for await (const item of needle.stream(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 16 })) {
    if ('token' in item) chunks.push(item);
    else final = item;
  }
  assert.deepEqual(chunks.map((c) => c.token), full.tokens);
  assert.ok(chunks.every((c) => typeof c.text === 'string'));
  assert.deepEqual(final.tokens, full.tokens);
  assert.equal(final.text, full.text);
});

test('onToken sees the same tokens as the result, in order', async () => {
  const seen = [];
  const r = await needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 12, onToken: (c) => seen.push(c.token) });
  assert.deepEqual(seen, r.tokens);
});

test('an abort stops generation within one token and rejects with an AbortError holding the partial result', async () => {
  // Temperature 4 keeps the default model from ending on its own within the abort's latency
  // (unaborted it runs to max_tokens; at temperature 1 it stops after 4 tokens, before an abort
  // from this thread can reach a fast worker).
  const request = { tools: SMART_HOME_TOOLS, maxTokens: 200, temperature: 4, seed: 7 };
  const full = await needle.complete(QUERY, request);
  assert.ok(full.tokens.length > 8, `the unaborted run must outlast the abort's latency (${full.tokens.length} tokens)`);
  const ctl = new AbortController();
  let seen = 0;
  const err = await needle
    .complete(QUERY, {
      ...request,
      signal: ctl.signal,
      onToken: () => {
        seen += 1;
        if (seen === 1) ctl.abort();
      },
    })
    .then(
      () => null,
      (e) => e,
    );
  assert.ok(err instanceof NeedleError, 'the aborted request must reject');
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'aborted');
  assert.equal(err.result.stop_reason, 'aborted');
  // A worker thread goes on generating while the first token and the abort cross between threads
  // (a few tokens; 13 with a training run on the other of two cores): each of those was streamed,
  // none came after the abort landed, and the generation stopped well short of where it stops on
  // its own (a quarter of it, so that a scheduler's delay is not read as an ignored abort).
  assert.equal(err.result.tokens.length, seen, 'every token generated before the abort was streamed, and no other');
  assert.ok(seen <= full.tokens.length / 4, `${seen} tokens after an abort at the first (${full.tokens.length} unaborted)`);
});

test('a request aborted before it starts rejects at once and never runs', async () => {
  const ctl = new AbortController();
  ctl.abort();
  await assert.rejects(needle.complete(QUERY, { signal: ctl.signal }), { name: 'AbortError', code: 'aborted' });
});

test('overlapping requests run one at a time in the order they were made', async () => {
  const order = [];
  const queued = ['first', 'second', 'third'].map((q, i) =>
    needle.complete(q, { tools: SMART_HOME_TOOLS, maxTokens: 4, onToken: () => order.push(i) }).then((r) => {
      order.push(`done ${i}`);
      return r;
    }),
  );
  const reset = needle.reset().then(() => order.push('reset'));
  const results = await Promise.all(queued);
  await reset;
  const dones = order.filter((x) => typeof x === 'string');
  assert.deepEqual(dones, ['done 0', 'done 1', 'done 2', 'reset']);
  // Tokens of one request never interleave with another's.
  const tokenOwners = order.filter((x) => typeof x === 'number');
  assert.deepEqual(tokenOwners, [...tokenOwners].sort());
  // Each behaves as if alone: the same as a fresh single call.
  const alone = await needle.complete('second', { tools: SMART_HOME_TOOLS, maxTokens: 4 });
  assert.deepEqual(results[1].tokens, alone.tokens);
});

test('a queued request aborted while another runs is skipped and the rest still run', async () => {
  const ctl = new AbortController();
  const a = needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 6 });
  const b = needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 6, signal: ctl.signal });
  const c = needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 6 });
  ctl.abort();
  const [ra, rb, rc] = await Promise.allSettled([a, b, c]);
  assert.equal(ra.status, 'fulfilled');
  assert.equal(rb.status, 'rejected');
  assert.equal(rb.reason.code, 'aborted');
  assert.equal(rc.status, 'fulfilled');
  assert.deepEqual(rc.value.tokens, ra.value.tokens);
});

test('bytes that are not a .cact container reject with bad_tag', async () => {
  const junk = new TextEncoder().encode('<!doctype html><html>not a model</html>');
  await assert.rejects(Needle.load(junk), { name: 'NeedleError', code: 'bad_tag' });
});

test('a truncated container rejects with a typed error, not a crash', async () => {
  for (const len of [3, 64, Math.floor(BYTES.length / 2), BYTES.length - 1]) {
    const err = await Needle.load(BYTES.slice(0, len)).then(
      () => null,
      (e) => e,
    );
    assert.ok(err instanceof NeedleError, `length ${len}: loaded`);
    assert.ok(['truncated', 'bad_tag', 'bad_header', 'bad_tensor', 'bad_tokenizer'].includes(err.code), `${len}: ${err.code}`);
  }
});

test('a URL that answers 404 rejects with fetch_failed and the status', async () => {
  await assert.rejects(Needle.load(`${server.url}models/missing.cact`), { code: 'fetch_failed', status: 404 });
});

test('a load whose signal is already aborted rejects with an AbortError', async () => {
  const ctl = new AbortController();
  ctl.abort();
  await assert.rejects(Needle.load(`${server.url}models/default.cact`, { signal: ctl.signal }), { name: 'AbortError' });
});

test('an unsupported source type rejects with bad_source', async () => {
  await assert.rejects(Needle.load(42), { code: 'bad_source' });
  await assert.rejects(Needle.load({ url: 'x' }), { code: 'bad_source' });
});

test('a URL source reports download then init progress and records where it came from', async () => {
  const phases = [];
  const n = await Needle.load(`${server.url}models/default.cact`, { onProgress: (p) => phases.push(p) });
  try {
    assert.equal(n.info.source, 'network');
    assert.equal(n.info.bytes, BYTES.length);
    const download = phases.filter((p) => p.phase === 'download');
    assert.equal(download.at(-1).loaded, BYTES.length);
    assert.equal(phases.at(-1).phase, 'init');
    assert.equal(phases.at(-1).loaded, phases.at(-1).total);
  } finally {
    n.dispose();
  }
});

test('Blob, ArrayBuffer and file: URL sources load the same model', async () => {
  const want = await needle.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 6 });
  for (const source of [new Blob([BYTES]), BYTES.buffer.slice(0), pathToFileURL(MODEL)]) {
    const n = await Needle.load(source);
    try {
      const r = await n.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 6 });
      assert.deepEqual(r.tokens, want.tokens);
    } finally {
      n.dispose();
    }
  }
});

test('tools given as objects render the same prompt as their JSON text, key order kept', async () => {
  const tools = JSON.parse(SMART_HOME_TOOLS);
  assert.equal(await needle.render(QUERY, { tools }), await needle.render(QUERY, { tools: SMART_HOME_TOOLS }));
  const flat = [{ name: 'set_light', parameters: { type: 'object' }, description: 'Turn a light on or off.' }];
  const prompt = await needle.render(QUERY, { tools: flat });
  assert.ok(prompt.indexOf('"parameters"') < prompt.indexOf('"description"'), 'caller key order survives');
});

test('invalid tool JSON rejects with bad_json', async () => {
  await assert.rejects(needle.complete(QUERY, { tools: '[{"name": ' }), { code: 'bad_json' });
});

test('numbers that are not whole and in range reject with invalid_argument instead of wrapping', async () => {
  for (const opts of [{ seed: 1.5 }, { seed: -1 }, { seed: 2 ** 60 }, { maxTokens: -1 }, { maxTokens: NaN }, { topK: 2.5 }]) {
    await assert.rejects(needle.complete(QUERY, opts), { code: 'invalid_argument' }, JSON.stringify(opts));
  }
  await assert.rejects(needle.complete(QUERY, { temperature: -1 }), { code: 'invalid_argument' });
  await assert.rejects(needle.complete(QUERY, { topP: 0 }), { code: 'invalid_argument' });
  await assert.rejects(Needle.load(BYTES, { layers: 1.5 }), { code: 'invalid_argument' });
  await assert.rejects(Needle.load(BYTES, { kv: 'int4' }), { code: 'invalid_argument' });
});

test('tokenize and detokenize round-trip text', async () => {
  const text = 'set the light to 50% — please';
  const ids = await needle.tokenize(text);
  assert.ok(ids instanceof Uint32Array && ids.length > 0);
  assert.equal(await needle.detokenize(ids), text);
});

test('calls after dispose reject with code disposed, and dispose rejects pending calls', async () => {
  const n = await Needle.load(BYTES);
  const pending = n.complete(QUERY, { tools: SMART_HOME_TOOLS, maxTokens: 50 });
  n.dispose();
  await assert.rejects(pending, { code: 'disposed' });
  await assert.rejects(n.complete(QUERY), { code: 'disposed' });
  assert.equal(n.disposed, true);
});
