// The hand-kept file lists (pkg/package.json `files`, tools/extension.mjs, www/sw.js) hold every
// file the package's modules reach: a new module that one list misses fails here, not in a
// published package, an extension or an offline demo that cannot load it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { ROOT } from './helpers.mjs';

const PKG = join(ROOT, 'pkg');

/** Files under pkg/ that `entries` reach by static imports, `import('…')` and `new URL('…', import.meta.url)`. */
function reached(entries) {
  const seen = new Set();
  const todo = entries.map((e) => join(PKG, e));
  while (todo.length) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith('.js')) continue;
    const text = readFileSync(file, 'utf8');
    const specs = [
      ...text.matchAll(/(?:import|export)\s[^'"]*?from\s*'(\.[^']+)'/g),
      // The wasm glue (a build output) writes double quotes: the gpu build's reaches gpu-wait.js.
      ...text.matchAll(/import \* as \w+ from "(\.[^"]+)"/g),
      ...text.matchAll(/import\(\s*(?:\/\*.*?\*\/\s*)*'(\.[^']+)'\s*\)/g),
      ...text.matchAll(/new URL\('(\.[^']+)', import\.meta\.url\)/g),
    ].map((m) => m[1]);
    for (const spec of specs) todo.push(join(dirname(file), spec));
  }
  return [...seen].map((f) => relative(PKG, f)).sort();
}

const FILES = reached(['index.js', 'worker.js', 'thread.js', 'extension.js', 'extension-sw.js']);

test('the package reaches its engine modules (the walk works)', () => {
  for (const f of ['worker.js', 'engine/generate.js', 'threads.js', 'wasm/simd/needle_bg.wasm', 'wasm/gpu/gpu-wait.js']) {
    assert.ok(FILES.includes(f), `${f} not reached: ${FILES.join(', ')}`);
  }
});

test('pkg/package.json `files` publishes every module the package reaches', () => {
  const files = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')).files;
  const covered = (f) => files.some((e) => e === f || (e.endsWith('/') && f.startsWith(e)));
  assert.deepEqual(FILES.filter((f) => !covered(f)), []);
});

test('the extension copies every module the package reaches', () => {
  const text = readFileSync(join(ROOT, 'tools/extension.mjs'), 'utf8');
  // The array literal as JSON: double quotes, no trailing comma (the formatter writes one).
  const list = (name) =>
    JSON.parse(
      text
        .match(new RegExp(`const ${name} = (\\[[^\\]]*\\])`))[1]
        .replace(/'/g, '"')
        .replace(/,\s*\]$/, ']'),
    );
  const copied = [...list('PKG_FILES'), ...list('WASM_FILES').map((f) => `wasm/${f}`)];
  const covered = (f) => copied.some((e) => e === f || f.startsWith(`${e}/`));
  assert.deepEqual(FILES.filter((f) => !covered(f)), []);
});

test('the demo\'s service worker keeps every module a browser page loads offline', () => {
  const text = readFileSync(join(ROOT, 'www/sw.js'), 'utf8');
  const assets = new Set([...text.matchAll(/'\.\/pkg\/([^']+)'/g)].map((m) => m[1]));
  // Reached only where there is no Worker or in an extension, never by the demo page.
  const notInPages = (f) => f.startsWith('host/node') || f.startsWith('extension');
  assert.deepEqual(FILES.filter((f) => !assets.has(f) && !notInPages(f)), []);
});
