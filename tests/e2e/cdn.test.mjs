// The package served from another origin, as from a CDN, in Chromium (Playwright, Debian's
// /usr/bin/chromium): a page on one local origin imports it from a second one (which sends CORS
// and Cross-Origin-Resource-Policy, as jsDelivr does) by a plain module script and by an import
// map, with and without cross-origin isolation, loads the default model (or a model by name from a
// third origin serving the Hub's layout) and answers. The worker starts through a same-origin
// blob: module; a worker script that cannot load is a NeedleError.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

import { MIME } from '../../tools/serve.mjs';
import { ROOT, defaultModel } from '../js/helpers.mjs';
import { startHub } from '../js/hub-server.mjs';

const ISOLATED = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
const servers = [];
let cdn;
let hub;
let context;
let profile;

/** A server on 127.0.0.1 answering `respond(path) -> {status, headers, body}`; resolves to its origin. */
async function serve(respond) {
  const server = createServer(async (req, res) => {
    const { status, headers, body } = await respond(new URL(req.url, 'http://x').pathname);
    res.writeHead(status, headers);
    res.end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  servers.push(server);
  return `http://127.0.0.1:${server.address().port}`;
}

/** The package's folder with a CDN's headers. */
function cdnFiles(path) {
  const file = normalize(join(ROOT, 'pkg', path.replace(/^\/pkg\//, '')));
  const headers = {
    'Access-Control-Allow-Origin': '*',
    'Cross-Origin-Resource-Policy': 'cross-origin',
  };
  return stat(file).then(
    async (info) => {
      if (!path.startsWith('/pkg/') || !file.startsWith(join(ROOT, 'pkg')) || !info.isFile())
        throw new Error('no');
      return {
        status: 200,
        headers: { ...headers, 'Content-Type': MIME[extname(file)] || 'application/octet-stream' },
        body: await readFile(file),
      };
    },
    () => ({ status: 404, headers, body: 'not found' }),
  );
}

/**
 * A page that loads the package from the CDN, then `source` (the default model when undefined),
 * and reports through `window.__done`.
 */
function page(how, loadOptions = {}, source = undefined) {
  const specifier = how === 'importmap' ? 'needle-web' : `${cdn}/pkg/index.js`;
  const map =
    how === 'importmap'
      ? `<script type="importmap">{"imports":{"needle-web":"${cdn}/pkg/index.js"}}</script>`
      : '';
  return `<!doctype html><meta charset="utf-8">${map}
<script type="module">
  import { Needle } from '${specifier}';
  window.__done = (async () => {
    try {
      const needle = await Needle.load(${JSON.stringify(source)}, ${JSON.stringify({ cache: false, ...loadOptions })});
      const tools = [{ name: 'set_thermostat', parameters: { type: 'object', properties: { temperature: { type: 'integer' } }, required: ['temperature'] } }];
      const r = await needle.complete('Set the thermostat to 22 degrees', { tools, requireCall: true, maxTokens: 48 });
      const info = needle.info;
      needle.dispose();
      return { calls: r.function_calls, variant: info.variant, threads: info.threads, isolated: self.crossOriginIsolated, source: info.source, bytes: info.bytes };
    } catch (e) {
      return { error: { name: e.name, code: e.code, message: e.message } };
    }
  })();
</script>`;
}

before(async () => {
  cdn = await serve(cdnFiles);
  const model = new Uint8Array(await readFile(defaultModel()));
  hub = await startHub({ 'Cactus-Compute/needle3': { main: { 'needle3.cact': model } } });
  profile = mkdtempSync(join(tmpdir(), 'needle-e2e-cdn-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
});

after(async () => {
  await context?.close();
  for (const s of servers) s.close();
  await hub?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function visit(html, isolated) {
  const origin = await serve(async () => ({
    status: 200,
    headers: { 'Content-Type': MIME['.html'], ...(isolated ? ISOLATED : {}) },
    body: html,
  }));
  const tab = await context.newPage();
  const workers = [];
  tab.on('worker', (w) => workers.push(w.url()));
  try {
    await tab.goto(`${origin}/`);
    const result = await tab.evaluate(() => window.__done);
    return { result, workers };
  } finally {
    await tab.close();
  }
}

for (const how of ['module', 'importmap']) {
  for (const isolated of [false, true]) {
    test(`from another origin (${how}, ${isolated ? '' : 'not '}cross-origin isolated): the default model answers`, async () => {
      const { result, workers } = await visit(page(how), isolated);
      assert.equal(result.error, undefined, JSON.stringify(result.error));
      assert.equal(result.isolated, isolated);
      assert.equal(result.calls.length, 1);
      assert.equal(result.calls[0].name, 'set_thermostat');
      // Isolated, the threaded build's threads start from the other origin too.
      assert.equal(result.variant, isolated ? 'threaded' : 'simd');
      assert.ok(
        workers.some((u) => u.startsWith('blob:')),
        `a blob: worker started: ${workers.join(', ')}`,
      );
    });
  }
}

for (const isolated of [false, true]) {
  test(`from another origin (${isolated ? '' : 'not '}cross-origin isolated): a model by name from a Hub mirror answers`, async () => {
    const { result } = await visit(page('module', { modelHost: hub.url }, 'needle3'), isolated);
    assert.equal(result.error, undefined, JSON.stringify(result.error));
    assert.equal(result.isolated, isolated);
    assert.equal(result.source, 'network');
    assert.equal(result.bytes, (await readFile(defaultModel())).length);
    assert.equal(result.calls.length, 1);
    assert.equal(result.calls[0].name, 'set_thermostat');
    assert.ok(
      hub.requests.some((r) => r.path.startsWith('/Cactus-Compute/needle3/resolve/main/')),
      'the name resolved against the mirror',
    );
  });
}

test('a worker script that cannot load rejects with a NeedleError', async () => {
  const { result } = await visit(
    page('module', { workerUrl: `${cdn}/pkg/no-such-worker.js` }),
    false,
  );
  assert.equal(result.error?.name, 'NeedleError', JSON.stringify(result));
  assert.equal(result.error.code, 'worker_died');
});
