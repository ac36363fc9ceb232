// Issue 43, defect 3: an abort fired during a long prefill stops it within one prefill chunk
// (the worker runs the prompt in chunks and looks at its message loop between them), not once
// the whole prompt has run. The default model's header is given a long context (its tensors
// do not depend on it), so a long query prefills for seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { defaultModel } from './helpers.mjs';

const MAX_SEQ_LEN_AT = 52; // the v3 header's max_seq_len field (u32, little-endian)
const BOUND_MS = 250;

function longContextModel(tokens) {
  const bytes = new Uint8Array(readFileSync(defaultModel()));
  new DataView(bytes.buffer).setUint32(MAX_SEQ_LEN_AT, tokens, true);
  return bytes;
}

test(`an abort during a long prefill rejects within ${BOUND_MS} ms, and the engine serves the next request`, async () => {
  const needle = await Needle.load(longContextModel(1 << 14), { worker: 'auto' });
  try {
    const query = 'please turn on the kitchen lights and the fan in the hall '.repeat(450);
    // The whole prefill, unaborted (maxTokens 0: the prompt only).
    const full = await needle.complete(query, { maxTokens: 0 });
    const prefillMs = full.timings.prefill_ms;
    assert.ok(full.usage.prompt_tokens > 3000, `${full.usage.prompt_tokens} prompt tokens`);
    await needle.reset();
    const stop = new AbortController();
    const started = performance.now();
    const pending = needle.complete(query, { signal: stop.signal, maxTokens: 4 });
    const firedAfter = Math.min(prefillMs / 3, 1000);
    await new Promise((r) => setTimeout(r, firedAfter));
    const fired = performance.now();
    stop.abort();
    const e = await pending.then(
      () => assert.fail('the request finished'),
      (err) => err,
    );
    const latency = performance.now() - fired;
    console.log(`prefill ${prefillMs.toFixed(0)} ms for ${full.usage.prompt_tokens} tokens; abort fired ${(fired - started).toFixed(0)} ms in, rejected ${latency.toFixed(1)} ms after`);
    assert.equal(e.code, 'aborted');
    assert.equal(e.result.stop_reason, 'aborted');
    assert.deepEqual(e.result.tokens, [], 'no token was generated');
    assert.ok(prefillMs > 4 * BOUND_MS, `the whole prefill (${prefillMs} ms) is too short to tell`);
    assert.ok(latency < BOUND_MS, `rejected ${latency} ms after the abort`);
    // The state an aborted prefill leaves serves the next request as a fresh one would.
    const again = await needle.complete('turn on the lights', { maxTokens: 8 });
    const fresh = await Needle.load(longContextModel(1 << 14));
    try {
      assert.deepEqual(again.tokens, (await fresh.complete('turn on the lights', { maxTokens: 8 })).tokens);
    } finally {
      fresh.dispose();
    }
  } finally {
    needle.dispose();
  }
});
