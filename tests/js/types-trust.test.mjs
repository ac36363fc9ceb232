// Issue 50's type checks: tsc --strict over tests/types/trust.ts (untyped enum/const, the schemas
// tool parameters hold) and ai-sdk.ts (the provider's model as `ai` 6 and 7 type it), and no
// `any` anywhere in the package's public types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

import { ROOT } from './helpers.mjs';

test('tests/types/trust.ts and ai-sdk.ts compile (tsc --strict)', () => {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tests/types/tsconfig.trust.json'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('no `any` in the public types (pkg/*.d.ts)', () => {
  const found = [];
  for (const name of readdirSync(join(ROOT, 'pkg')).filter((f) => f.endsWith('.d.ts'))) {
    const text = readFileSync(join(ROOT, 'pkg', name), 'utf8');
    const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (node.kind === ts.SyntaxKind.AnyKeyword) {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${name}:${line + 1}: ${text.split('\n')[line].trim()}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  assert.deepEqual(found, []);
});
