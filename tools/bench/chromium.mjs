// One benchmark run of a needle-web wasm build in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core), in a module Worker as users run it. Prints harness.mjs's records as
// JSON lines, then `pkg_load`: the package's own `Needle.load(bytes)` from the page (worker start,
// transfer and engine build included).
//
//   node tools/bench/chromium.mjs --variant simd|baseline|threaded --model F.cact --requests R.json [--kv int8|f32]
//        [--numerics exact|deploy] [--threads N (the threaded build's pool; default one per core)]
import { readFile } from 'node:fs/promises';
import { benchBrowser } from './browser.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const requests = JSON.parse(await readFile(opt('--requests'), 'utf8'));
const variant = opt('--variant', 'simd');
const kv = opt('--kv', undefined);
const numerics = opt('--numerics', undefined);
const threads = opt('--threads', undefined);

const { server, browser, close } = await benchBrowser(opt('--model'));
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}bench/page.html`);
  const result = await page.evaluate(
    async ({ variant, requests, kv, numerics, threads }) => {
      const bytes = await (await fetch('/models/default.cact')).arrayBuffer();
      const worker = new Worker('/bench/worker.mjs', { type: 'module' });
      const out = await new Promise((ok) => {
        worker.onmessage = (e) => ok(e.data);
        worker.onerror = (e) => ok({ error: `worker: ${e.message}` });
        worker.postMessage({ variant, bytes, requests, kv, numerics, threads }, [bytes]);
      });
      worker.terminate();
      if (out.error || (variant !== 'simd' && variant !== 'baseline')) return out;
      // The package's own path: bytes in hand on the page -> a ready worker.
      const model = new Uint8Array(await (await fetch('/models/default.cact')).arrayBuffer());
      const { Needle } = await import('/pkg/index.js');
      const t0 = performance.now();
      const needle = await Needle.load(model, { simd: variant === 'simd', kv });
      out.records.push({ kind: 'pkg_load', load_ms: performance.now() - t0 });
      needle.dispose();
      return out;
    },
    { variant, requests, kv, numerics, threads: threads && Number(threads) },
  );
  if (result.error) throw new Error(result.error);
  for (const record of result.records) console.log(JSON.stringify(record));
} finally {
  await close();
}
