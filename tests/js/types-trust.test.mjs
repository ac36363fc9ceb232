// Issue 50's type checks: tsc --strict over tests/types/trust.ts (untyped enum/const, the schemas
// tool parameters hold).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { ROOT } from './helpers.mjs';

test('tests/types/trust.ts compiles (tsc --strict)', () => {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tests/types/tsconfig.trust.json'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
