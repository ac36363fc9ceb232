// How long an abort fired during a fresh engine's first prompt takes to reject (issue 43: under
// 250 ms after the signal in a worker, at the shipped Needle 3 geometry). Each firing time gets a
// new engine, so every measurement is a first prefill.
//   node tools/bench/abort-latency.mjs [--model bench/needle3-shipped-w4.cact] [--build simd]
//                                      [--at 20,60,150,300]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Needle } from '../../pkg/index.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'bench/needle3-shipped-w4.cact' },
    build: { type: 'string', default: 'simd' },
    at: { type: 'string', default: '20,60,150,300' },
  },
});
const bytes = new Uint8Array(readFileSync(values.model));
const query = 'please turn on the kitchen lights and the fan in the hall '.repeat(60);
for (const at of values.at.split(',').map(Number)) {
  const needle = await Needle.load(bytes, { worker: 'auto', build: values.build });
  const stop = new AbortController();
  const t0 = performance.now();
  const pending = needle.complete(query, { signal: stop.signal, maxTokens: 4 });
  await new Promise((r) => setTimeout(r, at));
  const fired = performance.now();
  stop.abort();
  const err = await pending.then(
    () => null,
    (e) => e,
  );
  const latency = performance.now() - fired;
  const init = needle.info.load_ms.init;
  console.log(
    `${values.build}: fired ${(fired - t0).toFixed(0)} ms into the first prompt, rejected ` +
      `${latency.toFixed(0)} ms after (${err?.code ?? 'not aborted'}); load init ${init.toFixed(0)} ms`,
  );
  needle.dispose();
}
