#!/usr/bin/env node
// The wasm modules' size budget: fails when a build in pkg/wasm/ is larger than its fixed limit
// in tools/size-budget.json, raw or brotli (quality 11: what a page downloads). The limits are
// set by hand and stay put: a module that outgrows one is made smaller, or the limit is raised in
// a commit of its own that says what grew and why. The SIMD build (the one most pages run) must
// be there; the other variants are checked when built.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';

export const BUDGET = 'tools/size-budget.json';
const REQUIRED = 'simd';

/** A module's sizes in bytes: raw, and brotli at quality 11. */
export function sizes(bytes) {
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  return { raw: bytes.length, brotli: brotli.length };
}

/** Checks the builds under `root` against its budget: a report line per variant and measure,
 * and the reasons it fails (empty when within budget). */
export function check(root = '.') {
  const { limits } = JSON.parse(readFileSync(join(root, BUDGET), 'utf8'));
  const lines = [];
  const failures = [];
  for (const [variant, limit] of Object.entries(limits)) {
    const file = join(root, `pkg/wasm/${variant}/needle_bg.wasm`);
    if (!existsSync(file)) {
      if (variant === REQUIRED) failures.push(`${file} is missing (./build.sh ${variant})`);
      else lines.push(`${variant.padEnd(9)} not built, not checked`);
      continue;
    }
    const now = sizes(readFileSync(file));
    for (const measure of ['raw', 'brotli']) {
      const left = limit[measure] - now[measure];
      const note = left >= 0 ? `${left} left` : `${-left} OVER`;
      lines.push(
        `${variant.padEnd(9)}${measure.padStart(7)} ${String(now[measure]).padStart(7)} of ${limit[measure]} bytes (${note})`,
      );
      if (left < 0) failures.push(`${variant} ${measure} is ${-left} bytes over its limit`);
    }
  }
  return { lines, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { lines, failures } = check();
  for (const line of lines) console.log(`size budget: ${line}`);
  if (failures.length) {
    for (const f of failures) console.error(`size budget: ${f}`);
    console.error(
      `size budget: make the module smaller, or raise the limit in ${BUDGET} in a commit that says why`,
    );
    process.exit(1);
  }
}
