// One load options object: the core's table (src/session/load_options.rs LOAD_OPTIONS) is the
// list; the engine host hands every option of it to the core as one object (engine/load.js
// engineConfig), index.d.ts LoadOptions declares each, the CLI's usage names its flag, and each
// reaches the engine. Adding a load option to one surface and not another fails here.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Needle } from '../../pkg/index.js';
import { engineConfig } from '../../pkg/engine/load.js';
import * as glue from '../../pkg/wasm/simd/needle.js';
import { CLI, ROOT, defaultModel } from './helpers.mjs';

// Needle.load's spelling where it is not the core's (the package's option predates the table).
const PUBLIC = { context: 'maxContext' };

let core;
before(async () => {
  await glue.default({ module_or_path: readFileSync(join(ROOT, 'pkg/wasm/simd/needle_bg.wasm')) });
  core = glue.loadOptions();
});

const sorted = (names) => [...names].sort();

test('the engine host builds a session from exactly the core load options', () => {
  assert.ok(core.some((o) => o.name === 'context'), JSON.stringify(core));
  assert.deepEqual(sorted(Object.keys(engineConfig())), sorted(core.map((o) => o.name)));
});

test('index.d.ts LoadOptions declares every load option', () => {
  const dts = readFileSync(join(ROOT, 'pkg/index.d.ts'), 'utf8');
  const start = dts.indexOf('export interface LoadOptions');
  const body = dts.slice(dts.indexOf('{', start) + 1, dts.indexOf('\n}', start));
  const declared = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]);
  for (const { name } of core) assert.ok(declared.includes(PUBLIC[name] ?? name), name);
});

test("the CLI's usage names every load option's flag", () => {
  const help = execFileSync(CLI, ['help'], { encoding: 'utf8' });
  const run = help.split('\n').find((l) => l.trim().startsWith('run '));
  for (const { name, flag } of core) assert.ok(run.includes(flag), `needle run: no ${flag} (${name})`);
});

test('every load option reaches the engine, and a mistyped one is refused by name', async () => {
  const bytes = readFileSync(defaultModel());
  const plain = await Needle.load(bytes);
  const base = plain.info;
  plain.dispose();
  const asked = { kv: 'f32', numerics: 'deploy', layers: base.num_layers - 1, context: 64 };
  assert.deepEqual(sorted(Object.keys(asked)), sorted(core.map((o) => o.name)));
  const options = Object.fromEntries(Object.entries(asked).map(([k, v]) => [PUBLIC[k] ?? k, v]));
  const needle = await Needle.load(bytes, options);
  const info = needle.info;
  needle.dispose();
  const seen = { kv: info.kv, numerics: info.numerics, layers: info.depth, context: info.capacity };
  assert.deepEqual(seen, asked);
  assert.notEqual(base.capacity, 64);
  for (const [name, wrong] of [
    ['kv', 'f16'],
    ['numerics', 'fast'],
  ]) {
    const e = await Needle.load(bytes, { [name]: wrong }).then(
      () => assert.fail(`${name}: ${wrong} was accepted`),
      (err) => err,
    );
    assert.equal(e.code, 'invalid_argument', `${name}: ${e.message}`);
    assert.match(e.message, new RegExp(name), `${name}: ${e.message}`);
  }
});
