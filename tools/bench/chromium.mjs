// One benchmark run of a needle-web wasm build in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core), in a module Worker as users run it. Prints harness.mjs's records as
// JSON lines, then `pkg_load`: the package's own `Needle.load(bytes)` from the page (worker start,
// transfer and engine build included).
//
//   node tools/bench/chromium.mjs --variant simd|baseline|threaded --model F.cact --requests R.json [--kv int8|f32]
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { MIME } from '../serve.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const model = resolve(opt('--model'));
const requests = JSON.parse(await readFile(opt('--requests'), 'utf8'));
const variant = opt('--variant', 'simd');
const kv = opt('--kv', undefined);

// Cross-origin isolated (as tools/serve.mjs serves the demo): precise timers, SharedArrayBuffer.
const HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
const MOUNTS = [['/pkg/', join(ROOT, 'pkg')], ['/bench/', join(ROOT, 'tools/bench')]];

function locate(pathname) {
  if (pathname === '/model.cact') return model;
  for (const [prefix, dir] of MOUNTS) {
    if (!pathname.startsWith(prefix)) continue;
    const file = normalize(join(dir, pathname.slice(prefix.length)));
    return file.startsWith(dir + sep) ? file : null;
  }
  return null;
}

const server = createServer(async (req, res) => {
  const { pathname } = new URL(req.url, 'http://127.0.0.1');
  if (pathname === '/') {
    res.writeHead(200, { ...HEADERS, 'Content-Type': MIME['.html'] });
    return res.end('<!doctype html><title>needle-web bench</title>');
  }
  const file = locate(pathname);
  const body = file && (await readFile(file).catch(() => null));
  res.writeHead(body ? 200 : 404, { ...HEADERS, 'Content-Type': (file && MIME[extname(file)]) || 'application/octet-stream' });
  res.end(body || 'not found');
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  const result = await page.evaluate(
    async ({ variant, requests, kv }) => {
      const bytes = await (await fetch('/model.cact')).arrayBuffer();
      const worker = new Worker('/bench/worker.mjs', { type: 'module' });
      const out = await new Promise((ok) => {
        worker.onmessage = (e) => ok(e.data);
        worker.onerror = (e) => ok({ error: `worker: ${e.message}` });
        worker.postMessage({ variant, bytes, requests, kv }, [bytes]);
      });
      worker.terminate();
      if (out.error || (variant !== 'simd' && variant !== 'baseline')) return out;
      // The package's own path: bytes in hand on the page -> a ready worker.
      const model = new Uint8Array(await (await fetch('/model.cact')).arrayBuffer());
      const { Needle } = await import('/pkg/index.js');
      const t0 = performance.now();
      const needle = await Needle.load(model, { simd: variant === 'simd', kv });
      out.records.push({ kind: 'pkg_load', load_ms: performance.now() - t0 });
      needle.dispose();
      return out;
    },
    { variant, requests, kv },
  );
  if (result.error) throw new Error(result.error);
  for (const record of result.records) console.log(JSON.stringify(record));
} finally {
  await browser.close();
  server.close();
}
