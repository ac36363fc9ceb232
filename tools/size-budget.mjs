#!/usr/bin/env node
// The SIMD module's size budget: fails when pkg/wasm/simd/needle_bg.wasm is more than 5% over the
// figure recorded in tools/size-budget.json, so growth is a decision. After a growth that is
// wanted (or a saving), record the new figure: `node tools/size-budget.mjs --update`.
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';

const MODULE = 'pkg/wasm/simd/needle_bg.wasm';
const RECORD = 'tools/size-budget.json';
const SLACK = 1.05;

const raw = readFileSync(MODULE);
const now = {
  raw: raw.length,
  brotli: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
};
if (process.argv.includes('--update')) {
  writeFileSync(RECORD, `${JSON.stringify({ module: MODULE, ...now }, null, 2)}\n`);
  console.log(`size budget: recorded ${now.raw} bytes raw, ${now.brotli} brotli`);
} else {
  const budget = JSON.parse(readFileSync(RECORD, 'utf8'));
  const over = ['raw', 'brotli'].filter((k) => now[k] > budget[k] * SLACK);
  for (const k of ['raw', 'brotli']) {
    console.log(`size budget: ${k} ${now[k]} bytes (recorded ${budget[k]}, limit +5%)`);
  }
  if (over.length) {
    console.error(
      `size budget: ${MODULE} grew more than 5% (${over.join(', ')}); if that is wanted, run node tools/size-budget.mjs --update and say why in the commit`,
    );
    process.exit(1);
  }
}
