// Package hygiene: the types accept and reject what they should (tsc on tests/types), publint finds
// nothing, `prepack` builds what the tarball needs, and `npm pack` ships every `files` entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { publint } from 'publint';

import { ROOT } from './helpers.mjs';

const PKG = join(ROOT, 'pkg');
const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));

test('index.d.ts: typed tool schemas, tool-name results, storage and logger options (tsc --strict)', () => {
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tests/types/tsconfig.json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});

test('publint finds no error, warning or suggestion', async () => {
  const { messages } = await publint({ pkgDir: PKG, level: 'suggestion', strict: true });
  assert.deepEqual(messages, []);
});

test('prepack builds the wasm, the model and the generated modules', () => {
  assert.equal(manifest.scripts.prepack, 'cd .. && ./build.sh');
  const build = readFileSync(join(ROOT, 'build.sh'), 'utf8');
  assert.match(build, /build_variant simd/);
  assert.match(build, /tools\/package-assets\.mjs/);
});

test('npm pack ships every entry of `files` (and nothing from the repository outside them)', () => {
  // --ignore-scripts: the build already ran (dev.sh); prepack would only repeat it.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PKG, encoding: 'utf8' });
  const packed = JSON.parse(out)[0].files.map((f) => f.path);
  for (const entry of manifest.files) {
    const found = entry.endsWith('/') ? packed.some((p) => p.startsWith(entry)) : packed.includes(entry);
    assert.ok(found, `${entry} is not in the tarball`);
  }
  for (const p of packed) {
    const listed = p === 'package.json' || manifest.files.some((e) => (e.endsWith('/') ? p.startsWith(e) : p === e));
    assert.ok(listed, `${p} is packed but not listed in files`);
  }
});

test("the project's extension uses the package's public API, not its internals", () => {
  // A copy of pkg/ sits beside the extension's pages (tools/extension.mjs): what they import from
  // it must be what an installed package offers (Needle.download in place of storage/ internals).
  const PUBLIC = new Set(['./pkg/index.js', './pkg/extension.js', './pkg/webmcp.js']);
  const dir = join(ROOT, 'extension');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const [, spec] of text.matchAll(/\bfrom\s+'(\.\/pkg\/[^']+)'/g)) assert.ok(PUBLIC.has(spec), `${file} imports ${spec}`);
  }
});
