#!/usr/bin/env node
// Prints each built wasm's size raw, gzip -9 and brotli (quality 11): what a page downloads.
import { readFileSync, existsSync } from 'node:fs';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`.padStart(11);
for (const variant of ['threaded', 'simd', 'baseline', 'gpu']) {
  const file = `pkg/wasm/${variant}/needle_bg.wasm`;
  if (!existsSync(file)) continue;
  const raw = readFileSync(file);
  const gz = gzipSync(raw, { level: 9 }).length;
  const br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  console.log(`${file.padEnd(34)} raw ${kb(raw.length)}  gzip ${kb(gz)}  brotli ${kb(br)}`);
}
