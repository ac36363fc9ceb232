#!/usr/bin/env node
// The demo's static server (no dependencies): www/ at /, pkg/ at /pkg/, the embedded default model
// at /models/default.cact. 127.0.0.1 only. Sends the MIME types wasm streaming compilation needs
// and COOP/COEP, so the page is cross-origin isolated (SharedArrayBuffer, precise timers).
//
//   node tools/serve.mjs [--port 8080] [--model tests/fixtures/v3/default/model.cact]
import { createServer } from 'node:http';
import { stat, readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.cact': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
};

/** Maps a URL path to a file, or null. Never leaves the mounted directories. */
function locate(pathname, mounts, model) {
  if (model && pathname === '/models/default.cact') return model;
  for (const [prefix, dir] of mounts) {
    if (!pathname.startsWith(prefix)) continue;
    let rel = pathname.slice(prefix.length);
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = normalize(join(dir, rel));
    if (file !== dir && !file.startsWith(dir + sep)) return null;
    return file;
  }
  return null;
}

/**
 * Starts the server. Resolves to `{ url, port, close() }`. `onRequest({method, path, status})`
 * sees every request (the e2e tests use it to prove what was and was not fetched). `root`: serve
 * that one directory at / instead of the demo (the bundler tests serve each build's output).
 * `mounts`: more `[urlPrefix, directory]` pairs, served before the others (the benchmark's pages).
 * `isolated: false` leaves out COOP/COEP (the tests of the package without cross-origin isolation).
 */
export async function startServer({
  port = 8080,
  model,
  root,
  onRequest,
  mounts: extra = [],
  isolated = true,
} = {}) {
  const modelFile = root
    ? null
    : resolve(ROOT, model || process.env.NEEDLE_MODEL || 'tests/fixtures/v3/default/model.cact');
  const mounts = [
    ...extra,
    ...(root
      ? [['/', resolve(root)]]
      : [
          ['/pkg/', join(ROOT, 'pkg')],
          ['/', join(ROOT, 'www')],
        ]),
  ];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let pathname;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      pathname = null;
    }
    const done = (status, headers, body) => {
      res.writeHead(status, {
        ...(isolated ? ISOLATION : { 'X-Content-Type-Options': 'nosniff' }),
        ...headers,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      if (onRequest) onRequest({ method: req.method, path: url.pathname, status });
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return done(405, { Allow: 'GET, HEAD' }, '');
    const file = pathname && locate(pathname, mounts, modelFile);
    let info = null;
    if (file) info = await stat(file).catch(() => null);
    if (!info || !info.isFile()) return done(404, { 'Content-Type': MIME['.txt'] }, 'not found\n');
    const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const headers = {
      'Content-Type': MIME[extname(file)] || 'application/octet-stream',
      'Cache-Control': 'no-cache',
      ETag: etag,
    };
    if (req.headers['if-none-match'] === etag) return done(304, headers, undefined);
    const body = await readFile(file);
    done(200, { ...headers, 'Content-Length': String(body.length) }, body);
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', ok);
  });
  const actual = server.address().port;
  return {
    url: `http://127.0.0.1:${actual}/`,
    port: actual,
    model: modelFile,
    close: () => new Promise((ok) => server.close(ok)),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const s = await startServer({ port: Number(opt('--port') ?? 8080), model: opt('--model') });
  console.log(`needle-web demo: ${s.url}  (model: ${s.model})`);
}
