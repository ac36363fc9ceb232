// A request the core's JSON parser refuses for its size (json.rs MAX_INPUT, 16 MiB) whose prompt
// could not fit the context either is `context_full`, as the native CLI answers the same query:
// the caller sent a long text, not bad JSON (src/web/session.rs `Session::start`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { ROOT, defaultModel } from './helpers.mjs';
import init, { Session } from '../../pkg/wasm/simd/needle.js';

let session;
before(async () => {
  await init({ module_or_path: readFileSync(join(ROOT, 'pkg/wasm/simd/needle_bg.wasm')) });
  session = new Session(
    new Uint8Array(readFileSync(defaultModel())),
    JSON.stringify({ kv: 'f32', numerics: 'exact' }),
  );
});

const refusal = (request) => {
  try {
    session.start(JSON.stringify(request));
  } catch (e) {
    return e;
  }
  return null;
};

test('a query, system prompt or tool list past the JSON size limit is context_full', () => {
  const long = 'turn on the lights '.repeat(50 << 16); // 62 MB
  for (const [what, request] of [
    ['query', { query: long }],
    ['system prompt', { query: 'hi', system: 'be brief '.repeat(2 << 20) }],
    ['tools', { query: 'hi', tools: JSON.stringify([{ name: 'f', description: long }]) }],
  ]) {
    const t0 = performance.now();
    const e = refusal(request);
    assert.equal(e && e.code, 'context_full', `${what}: ${e && e.message}`);
    assert.ok(performance.now() - t0 < 5000, `${what}: ${performance.now() - t0} ms`);
  }
  // Within the parser's limit a long query is refused from its length as before.
  assert.equal(refusal({ query: 'turn on the lights '.repeat(1 << 16) }).code, 'context_full');
  // What fits still runs.
  assert.equal(refusal({ query: 'turn on the lights', maxTokens: 2 }), null);
});
