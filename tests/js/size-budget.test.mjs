// The size gate (tools/size-budget.mjs) on made-up modules in a scratch tree: random bytes, so
// brotli cannot shrink them below their raw size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { BUDGET, check } from '../../tools/size-budget.mjs';

function tree(limits, modules) {
  const root = mkdtempSync(join(tmpdir(), 'size-budget-'));
  mkdirSync(join(root, 'tools'));
  writeFileSync(join(root, BUDGET), JSON.stringify({ limits }));
  for (const [variant, bytes] of Object.entries(modules)) {
    mkdirSync(join(root, `pkg/wasm/${variant}`), { recursive: true });
    writeFileSync(join(root, `pkg/wasm/${variant}/needle_bg.wasm`), randomBytes(bytes));
  }
  return root;
}

const limits = { simd: { raw: 2000, brotli: 2100 }, gpu: { raw: 4000, brotli: 4100 } };

test('modules within their limits pass; an unbuilt variant other than simd is skipped', (t) => {
  const root = tree(limits, { simd: 1500 });
  t.after(() => rmSync(root, { recursive: true }));
  const { lines, failures } = check(root);
  assert.deepEqual(failures, []);
  assert.ok(lines.some((l) => l.startsWith('simd') && l.includes('1500 of 2000')));
  assert.ok(lines.some((l) => l.startsWith('gpu') && l.includes('not built')));
});

test('a module over its fixed limit fails, by variant and measure', (t) => {
  const root = tree(limits, { simd: 1500, gpu: 4050 });
  t.after(() => rmSync(root, { recursive: true }));
  const { failures } = check(root);
  assert.deepEqual(failures, ['gpu raw is 50 bytes over its limit']);
});

test('a brotli size over its limit fails on its own', (t) => {
  const root = tree({ simd: { raw: 3000, brotli: 1000 } }, { simd: 1500 });
  t.after(() => rmSync(root, { recursive: true }));
  const { failures } = check(root);
  assert.equal(failures.length, 1);
  assert.match(failures[0], /^simd brotli is \d+ bytes over its limit$/);
});

test('a missing SIMD module fails', (t) => {
  const root = tree(limits, {});
  t.after(() => rmSync(root, { recursive: true }));
  assert.match(check(root).failures[0], /simd\/needle_bg\.wasm is missing/);
});
