// One benchmark run of a needle-web wasm build in Node, for run.mjs: prints harness.mjs's
// records as JSON lines, then how long the package's own `Needle.load(bytes)` takes (record
// `pkg_load`: the path a Node user takes, copies included). No threaded build here: its threads are
// Web Workers, which Node lacks (the package runs one thread in Node).
//
//   node tools/bench/node.mjs --variant simd|baseline --model F.cact --requests R.json [--kv int8|f32]
//        [--numerics exact|deploy]
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { runBench } from './harness.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const variant = opt('--variant', 'simd');
const kv = opt('--kv', undefined);
const numerics = opt('--numerics', undefined);
const root = new URL('../../', import.meta.url);
const emit = (record) => console.log(JSON.stringify(record));

const requests = JSON.parse(await readFile(opt('--requests'), 'utf8'));
const glue = await import(new URL(`pkg/wasm/${variant}/needle.js`, root));
const exports = await glue.default({
  module_or_path: await readFile(new URL(`pkg/wasm/${variant}/needle_bg.wasm`, root)),
});
const bytes = new Uint8Array(await readFile(opt('--model')));

for (const record of runBench({ glue, memory: exports.memory, bytes, requests, kv, numerics }))
  emit(record);
emit({ kind: 'rss', rss_bytes: process.resourceUsage().maxRSS * 1024 });

if (variant === 'simd' || variant === 'baseline') {
  const { Needle } = await import(pathToFileURL(new URL('pkg/index.js', root).pathname).href);
  const t0 = performance.now();
  const needle = await Needle.load(bytes, { worker: false, simd: variant === 'simd', kv });
  emit({ kind: 'pkg_load', load_ms: performance.now() - t0 });
  needle.dispose();
}
