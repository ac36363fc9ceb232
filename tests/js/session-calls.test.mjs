// The session calls that may wait for the GPU are listed once (src/web/calls.rs), and the engine
// names them in `call(session, name, ...args)` (pkg/engine/call.js): every name it passes there
// is a method of the CPU build's Session and of the gpu build's, and a call the gpu build stages;
// an unlisted name or a mistyped argument is refused when staged (invalid_argument); a staged
// call before the gpu build has opened a device is refused (gpu_unavailable: run here without
// WebAssembly.promising, as it is refused before anything could wait); and no engine module calls
// a listed method on a session directly, which the gpu build could not run.
// Needs `./build.sh simd gpu` (the gpu build loads in Node; only `open` waits, through JSPI).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { defaultModel, ROOT } from './helpers.mjs';
import initGpu, * as gpu from '../../pkg/wasm/gpu/needle.js';
import initSimd, * as simd from '../../pkg/wasm/simd/needle.js';

const ENGINE = join(ROOT, 'pkg/engine');
const sources = readdirSync(ENGINE)
  .filter((f) => f.endsWith('.js'))
  .map((f) => [f, readFileSync(join(ENGINE, f), 'utf8')]);

/** The names the engine passes to `call(session, name, ...)` (or its `#call`). */
const called = new Set(
  sources.flatMap(([, text]) =>
    [...text.matchAll(/\bcall\(\s*[^,]+?,\s*'(\w+)'/g)].map((m) => m[1]),
  ),
);

let exports;
let session;
before(async () => {
  await initSimd({ module_or_path: readFileSync(join(ROOT, 'pkg/wasm/simd/needle_bg.wasm')) });
  exports = await initGpu({
    module_or_path: readFileSync(join(ROOT, 'pkg/wasm/gpu/needle_bg.wasm')),
  });
  session = new gpu.Session(new Uint8Array(readFileSync(defaultModel())), undefined);
});

const refused = (code, pattern) => (e) =>
  e.name === 'NeedleError' && e.code === code && pattern.test(e.message);

/** Stages `name` with `args` and runs it as call.js does, minus the promise. */
function run(name, args) {
  session.stage(name, args);
  exports.session_run_staged(session.__wbg_ptr);
  return session.take_result();
}

test('the engine calls the listed methods, each a method of both builds', () => {
  // The generate loop's calls, so a pattern that matched nothing cannot pass.
  for (const name of ['start', 'prefill', 'next', 'finish']) assert.ok(called.has(name), name);
  for (const name of called) {
    assert.equal(
      typeof simd.Session.prototype[name],
      name === 'open' ? 'undefined' : 'function',
      name,
    );
    assert.equal(typeof gpu.Session.prototype[name], 'function', name);
  }
});

test('the gpu build stages every name the engine calls, and no other', () => {
  for (const name of called) {
    try {
      session.stage(name, []);
    } catch (e) {
      // Staged without its arguments: refused for them, not for the name.
      assert.ok(refused('invalid_argument', /wrong arguments/)(e), `${name}: ${e.message}`);
    }
  }
  assert.throws(() => session.stage('next_token', []), refused('invalid_argument', /no such call/));
  assert.throws(() => session.stage('stage', []), refused('invalid_argument', /no such call/));
});

test('staged arguments are converted as the glue converts them, or refused', () => {
  assert.throws(
    () => session.stage('prefill', ['1']),
    refused('invalid_argument', /wrong arguments/),
  );
  assert.throws(() => session.stage('logits', [7]), refused('invalid_argument', /wrong arguments/));
  assert.throws(() => session.stage('start', [{}]), refused('invalid_argument', /wrong arguments/));
  assert.throws(
    () => session.stage('reconfigure', [5]),
    refused('invalid_argument', /wrong arguments/),
  );
  session.stage('reconfigure', [undefined]);
  session.stage('logits', [[1, 2]]);
  session.stage('logits', [new Uint32Array([1, 2])]);
});

test('a staged call before a device opened is refused, and so is taking a result never run', () => {
  const request = JSON.stringify({ query: 'Turn on the lights', tools: '[]' });
  assert.throws(() => run('start', [request]), refused('gpu_unavailable', /no device was opened/));
  assert.throws(
    () => run('logits', [new Uint32Array([1])]),
    refused('gpu_unavailable', /no device/),
  );
  assert.throws(() => session.take_result(), refused('invalid_argument', /no call has run/));
  // The session still answers its plain methods.
  assert.ok(session.encode('hello').length > 0);
});

test('no engine module calls a listed method on a session directly', () => {
  for (const [file, text] of sources) {
    for (const m of text.matchAll(/\b(?:s|session)\.(\w+)\(/g)) {
      assert.ok(!called.has(m[1]), `${file} calls session.${m[1]} directly, not through call()`);
    }
  }
});
