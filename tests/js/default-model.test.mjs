// The default model in the npm package (its own entry, needle-web/default-model): Needle.load() with
// no source, its integrity check,
// the environments export, the Node example (against the native CLI's embedded model) and the published file list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { Needle } from '../../pkg/index.js';
import { defaultModel } from '../../pkg/default-model.js';
import { environments } from '../../pkg/environments.js';
import { ROOT, cli } from './helpers.mjs';

const QUERY = 'Turn on the kitchen lights';
const native = (env, query) => JSON.parse(cli(['run', '--preset', env, '--query', query, '--constrained', '--json']));

test('the package bundles the committed default model and the environment presets (the six and browser)', () => {
  const bundled = readFileSync(new URL(defaultModel));
  assert.deepEqual(bundled, readFileSync(join(ROOT, 'www/models/default.cact')));
  const presets = readdirSync(join(ROOT, 'www/presets')).map((f) => f.replace(/\.json$/, '')).sort();
  assert.deepEqual(Object.keys(environments).sort(), presets);
  for (const name of presets) {
    const { system, tools } = JSON.parse(readFileSync(join(ROOT, `www/presets/${name}.json`), 'utf8'));
    assert.deepEqual(environments[name], { system, tools }, name);
  }
});

test('Needle.load() with no source runs the bundled model, checked against its SHA-256', async () => {
  const needle = await Needle.load();
  try {
    const sha = createHash('sha256').update(readFileSync(new URL(defaultModel))).digest('hex');
    assert.equal(needle.info.sha256, sha, 'the integrity check ran');
    const result = await needle.complete(QUERY, { ...environments.smart_home, constrained: true });
    const want = native('smart_home', QUERY);
    assert.deepEqual(result.tokens, want.tokens);
    assert.deepEqual(result.function_calls, want.function_calls);
  } finally {
    needle.dispose();
  }
  await assert.rejects(Needle.load(defaultModel, { integrity: '0'.repeat(64) }), { code: 'integrity' });
});

test('the Node example prints the calls the native CLI makes', () => {
  const query = 'Set a timer for 12 minutes';
  const out = execFileSync('node', [join(ROOT, 'pkg/examples/node.mjs'), query, 'productivity'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const want = native('productivity', query).function_calls;
  assert.ok(want.length > 0);
  assert.deepEqual(JSON.parse(out), want);
});

test("every file package.json publishes and every export it maps exists after ./build.sh", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'pkg/package.json'), 'utf8'));
  const targets = (v) => (typeof v === 'string' ? [v] : Object.values(v).flatMap(targets));
  for (const f of [...pkg.files, ...targets(pkg.exports)]) {
    assert.ok(existsSync(join(ROOT, 'pkg', f)), `pkg/${f}`);
  }
});
