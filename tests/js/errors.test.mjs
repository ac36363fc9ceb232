// Every failure of the package is a rejected promise with a typed NeedleError: broken downloads,
// malformed options and arguments, ids outside the vocabulary, integrity on every source kind.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

import { Needle, NeedleError } from '../../pkg/index.js';
import { errorToWire } from '../../pkg/protocol.js';
import { defaultModel } from './helpers.mjs';

const BYTES = new Uint8Array(readFileSync(defaultModel()));
const SHA = createHash('sha256').update(BYTES).digest('hex');
const WRONG = 'f'.repeat(64);
let needle;
let server;
let base;

/** Answers /cut (a body cut short of its Content-Length) and /gzip (a body that is not gzip). */
function startBrokenServer() {
  const srv = createServer((req, res) => {
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-length': String(BYTES.length), connection: 'close' });
      res.write(BYTES.subarray(0, 4096));
      setTimeout(() => res.socket.destroy(), 20);
    } else if (req.url === '/gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': '64', connection: 'close' });
      res.end(Buffer.alloc(64, 7));
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

before(async () => {
  needle = await Needle.load(BYTES);
  server = await startBrokenServer();
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  needle.dispose();
  server.close();
});

async function rejection(promise) {
  const e = await promise.then(
    () => assert.fail('resolved'),
    (e) => e,
  );
  assert.ok(e instanceof NeedleError, `not a NeedleError: ${e && e.stack}`);
  return e;
}

test('a download cut mid-body or with a bad content encoding rejects with fetch_failed', async () => {
  for (const path of ['/cut', '/gzip']) {
    const e = await rejection(Needle.load(`${base}${path}`, { cache: false }));
    assert.equal(e.code, 'fetch_failed', `${path}: ${e.code} ${e.message}`);
  }
});

test('a malformed integrity rejects with invalid_argument', async () => {
  for (const integrity of ['sha256-!!!', 'sha256-', 'md5-abc', '1234']) {
    const e = await rejection(Needle.load(BYTES, { integrity }));
    assert.equal(e.code, 'invalid_argument', `${integrity}: ${e.code} ${e.message}`);
  }
});

test('integrity holds for Uint8Array, ArrayBuffer and Blob sources too', async () => {
  const b64 = `sha256-${Buffer.from(SHA, 'hex').toString('base64')}`;
  for (const source of [BYTES, BYTES.slice().buffer, new Blob([BYTES])]) {
    const e = await rejection(Needle.load(source, { integrity: WRONG }));
    assert.equal(e.code, 'integrity', e.message);
    const ok = await Needle.load(source, { integrity: b64 });
    assert.equal(ok.info.sha256, SHA);
    ok.dispose();
  }
});

test('tools that are not JSON (a function, a cycle, a BigInt) reject with invalid_argument, never a synchronous throw', async () => {
  const cyclic = [{ name: 'x', parameters: {} }];
  cyclic[0].parameters.self = cyclic;
  for (const tools of [() => [], cyclic, [{ name: 'x', n: 10n }], Symbol('tools'), 42]) {
    let promise;
    assert.doesNotThrow(() => (promise = needle.complete('hi', { tools })));
    const e = await rejection(promise);
    assert.equal(e.code, 'invalid_argument', `${String(typeof tools)}: ${e.code} ${e.message}`);
    await rejection(needle.render('hi', { tools }));
  }
});

test('arguments that cannot be converted or posted reject with a NeedleError', async () => {
  const unprintable = { toString: () => { throw new Error('no string form'); } };
  const cases = [
    () => needle.complete(unprintable),
    () => needle.complete('hi', { system: unprintable }),
    () => needle.complete('hi', { kv: unprintable }),
    () => needle.tokenize(unprintable),
    () => needle.detokenize(null),
    () => needle.logits(undefined),
  ];
  for (const call of cases) {
    let promise;
    assert.doesNotThrow(() => (promise = call()));
    assert.equal((await rejection(promise)).code, 'invalid_argument');
  }
});

test('ids outside the vocabulary reject with token_out_of_vocab, as the CLI does', async () => {
  const vocab = needle.info.vocab;
  for (const ids of [[-1], [1e10], [vocab], [2 ** 32 + 5], [1.5], [1, Number.NaN]]) {
    assert.equal((await rejection(needle.detokenize(ids))).code, 'token_out_of_vocab', JSON.stringify(ids));
    assert.equal((await rejection(needle.logits(ids))).code, 'token_out_of_vocab', JSON.stringify(ids));
  }
  assert.equal(typeof (await needle.detokenize([1, vocab - 1])), 'string');
});

test('a WebAssembly trap crosses as engine_trap with its message, not internal', () => {
  const wire = errorToWire(new WebAssembly.RuntimeError('unreachable'));
  assert.equal(wire.code, 'engine_trap');
  assert.match(wire.message, /unreachable/);
  assert.equal(errorToWire(new TypeError('bug')).code, 'internal');
});
