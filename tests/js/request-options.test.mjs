// One request object: the core's option table (src/session/options.rs) is the list; complete()
// passes every option of it to the core, index.d.ts declares exactly those (and the call's and
// the engine's own), and the CLI's usage names a flag for each. Adding an option to one surface
// and not another fails here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Needle } from '../../pkg/index.js';
import * as glue from '../../pkg/wasm/simd/needle.js';
import { CLI, ROOT, defaultModel } from './helpers.mjs';

// complete() options that are not the request's: this call's, and the engine's for one request.
const CALL = ['signal', 'onToken'];
const ENGINE = ['layers', 'kv', 'numerics'];

let core;
let needle;
before(async () => {
  await glue.default({ module_or_path: readFileSync(join(ROOT, 'pkg/wasm/simd/needle_bg.wasm')) });
  core = glue.requestOptions();
  needle = await Needle.load(readFileSync(defaultModel()));
});
after(() => needle?.dispose());

const sorted = (names) => [...names].sort();

/** The property names of `interface NAME` in index.d.ts. */
function declared(name) {
  const dts = readFileSync(join(ROOT, 'pkg/index.d.ts'), 'utf8');
  const start = dts.indexOf(`export interface ${name}`);
  assert.ok(start >= 0, `index.d.ts has no ${name}`);
  const body = dts.slice(dts.indexOf('{', start) + 1, dts.indexOf('\n}', start));
  return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]);
}

test('index.d.ts CompleteOptions declares the core request options, and only those besides the call and engine ones', () => {
  const request = core.map((o) => o.name).filter((n) => n !== 'query'); // complete()'s first argument
  assert.ok(request.includes('maxTokens') && request.includes('turns'), JSON.stringify(core));
  assert.deepEqual(sorted(declared('CompleteOptions')), sorted([...request, ...CALL, ...ENGINE]));
});

test('complete() hands every request option to the core, which checks its type; an unknown one is refused', async () => {
  // The query is complete()'s first argument (its string form), the others options.
  for (const { name } of core.filter((o) => o.name !== 'query')) {
    // tools is converted on this side (JSON text or objects): a number is refused there.
    const e = await needle.complete('hi', { [name]: name === 'tools' ? 42 : {} }).then(
      () => assert.fail(`${name}: a mistyped value was accepted`),
      (err) => err,
    );
    assert.equal(e.code, 'invalid_argument', `${name}: ${e.message}`);
    assert.match(e.message, new RegExp(name), `${name}: ${e.message}`);
  }
  const e = await needle.complete('hi', { maxToken: 4 }).catch((err) => err);
  assert.equal(e.code, 'invalid_argument');
  assert.match(e.message, /unknown option maxToken/);
});

test('the CLI takes every request option: the flags the core names, the texts by their own options', () => {
  const help = execFileSync(CLI, ['help'], { encoding: 'utf8' });
  const run = help.split('\n').find((l) => l.trim().startsWith('run '));
  const chat = help.split('\n').find((l) => l.trim().startsWith('chat '));
  for (const { name, flag } of core) {
    // Without a flag: the query, tools (a file or a preset), system and date have options of
    // their own name; a conversation's turns come from chat's stdin.
    if (name === 'turns') assert.ok(chat, 'needle chat');
    else assert.ok(run.includes(flag ?? `--${name}`), `needle run's usage has no ${flag ?? `--${name}`} (${name})`);
  }
});
