// Prefix snapshots across hosts: a snapshot the native CLI writes (`needle snapshot`) loads into
// the wasm Session and gives the bits of a fresh prefill (tokens, confidence) and of the native
// run with it; the wasm Session makes the same bytes itself; a corrupted or mismatched snapshot
// is refused with a typed NeedleError code and the session still answers as a fresh one.
// Needs `./build.sh simd` and the native CLI (NEEDLE_CLI, default target/release/needle).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { ROOT, cli, defaultModel, tempDir } from './helpers.mjs';
import init, { Session } from '../../pkg/wasm/simd/needle.js';

const MODEL = defaultModel();
const ENV = JSON.parse(readFileSync(join(ROOT, 'www/presets/smart_home.json'), 'utf8'));
const TOOLS = JSON.stringify(ENV.tools);
const QUERY = 'Turn off the kitchen lights and dim the bedroom to 30 percent';
const MAX_TOKENS = 24;

let modelBytes;
let native; // kv -> snapshot bytes written by the native CLI
before(async () => {
  await init({ module_or_path: readFileSync(join(ROOT, 'pkg/wasm/simd/needle_bg.wasm')) });
  modelBytes = readFileSync(MODEL);
  native = {};
  for (const kv of ['int8', 'f32']) {
    const out = join(tempDir(), `smart_home-${kv}.snap`);
    cli(['snapshot', '--model', MODEL, '--preset', 'smart_home', '--kv', kv, '--out', out]);
    native[kv] = new Uint8Array(readFileSync(out));
  }
});

function session(kv) {
  return new Session(new Uint8Array(modelBytes), JSON.stringify({ kv, numerics: 'exact' }));
}

/** One greedy request through the session: the finish envelope, parsed. */
function answer(s) {
  s.start(
    JSON.stringify({ query: QUERY, tools: TOOLS, system: ENV.system, maxTokens: MAX_TOKENS }),
  );
  while (!s.prefill(64));
  while (s.next() !== undefined);
  return JSON.parse(s.finish());
}

function same(got, want, label) {
  assert.deepEqual(got.tokens, want.tokens, `${label}: tokens`);
  assert.equal(String(got.confidence), String(want.confidence), `${label}: confidence`);
  assert.equal(got.response, want.response, `${label}: response`);
}

for (const kv of ['int8', 'f32']) {
  test(`a native ${kv} snapshot gives a fresh prefill's bits in wasm`, () => {
    const fresh = answer(session(kv));
    assert.equal(fresh.usage.cached_tokens, 0);
    const s = session(kv);
    const n = s.load_snapshot(native[kv], undefined);
    const loaded = answer(s);
    assert.ok(n > 50, `the preset's prefix is ${n} tokens`);
    assert.equal(loaded.usage.cached_tokens, n, 'the request runs on from the snapshot');
    same(loaded, fresh, kv);
    // The native run with the same snapshot, and the snapshot wasm makes itself: same bytes.
    const dir = tempDir();
    const file = join(dir, 'in.snap');
    const tools = join(dir, 'tools.json');
    writeFileSync(file, native[kv]);
    writeFileSync(tools, TOOLS);
    const nat = JSON.parse(cli(['run', '--model', MODEL, '--tools', tools, '--system', ENV.system,
      '--query', QUERY, '--max-tokens', String(MAX_TOKENS), '--kv', kv, '--snapshot', file,
      '--json']));
    assert.equal(Number(nat.snapshot_tokens), n);
    same(nat, fresh, `${kv} native`);
    const made = session(kv).save_snapshot(TOOLS, ENV.system, undefined);
    assert.ok(Buffer.from(made).equals(Buffer.from(native[kv])), 'wasm and native snapshot bytes');
  });
}

test('a corrupted, truncated or mismatched snapshot is refused with a typed code', () => {
  const fresh = answer(session('int8'));
  const flipped = native.int8.slice();
  flipped[flipped.length - 100] ^= 0x10;
  const cases = [
    ['flipped byte', 'int8', flipped, 'bad_snapshot'],
    ['truncated', 'int8', native.int8.slice(0, native.int8.length - 1), 'bad_snapshot'],
    ['not a snapshot', 'int8', modelBytes.subarray(0, 4096), 'bad_snapshot'],
    ['other KV precision', 'f32', native.int8, 'snapshot_mismatch'],
  ];
  for (const [what, kv, bytes, code] of cases) {
    const s = session(kv);
    assert.throws(() => s.load_snapshot(bytes, undefined),
      (e) => e.name === 'NeedleError' && e.code === code, what);
    if (kv === 'int8') {
      const after = answer(s);
      assert.equal(after.usage.cached_tokens, 0, `${what}: nothing of it is used`);
      same(after, fresh, what);
    }
  }
  assert.throws(() => session('int8').load_snapshot(native.int8, new Uint8Array(31)),
    (e) => e.code === 'invalid_argument');
});

test('timing: loading the snapshot vs the cold prefill of its prefix (diagnostic)', () => {
  const s = session('int8');
  let t0 = performance.now();
  s.save_snapshot(TOOLS, ENV.system, undefined);
  const prefill = performance.now() - t0;
  s.load_snapshot(native.int8, undefined); // hashes the model once
  const warm = [];
  for (let i = 0; i < 5; i++) {
    t0 = performance.now();
    s.load_snapshot(native.int8, undefined);
    warm.push(performance.now() - t0);
  }
  const cold = session('int8');
  t0 = performance.now();
  cold.load_snapshot(native.int8, undefined);
  const first = performance.now() - t0;
  console.log(`# snapshot ${native.int8.length} B int8 / ${native.f32.length} B f32; prefill ` +
    `${prefill.toFixed(1)} ms; load ${Math.min(...warm).toFixed(2)} ms (first, model hashed: ` +
    `${first.toFixed(1)} ms)`);
});
