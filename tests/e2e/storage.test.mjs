// Storage that degrades, in Chromium: Cache Storage refusing (made to throw) falls back to
// IndexedDB; with IndexedDB refused too the model runs uncached; a tiny origin quota (DevTools
// Protocol) turns the cache write into a warning. Every load still answers like the native CLI.
// A bad 200 (an HTML page, a file cut short) is never served from Cache Storage (issue 51).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { assertSameAsNative, cli, defaultModel } from '../js/helpers.mjs';

const QUERY = 'Turn on the kitchen lights';
let server;
let browser;
let native;

before(async () => {
  server = await startServer({ port: 0, model: defaultModel() });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  native = JSON.parse(cli(['run', '--model', defaultModel(), '--preset', 'smart_home', '--query', QUERY, '--max-tokens', '64', '--json']));
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh profile with a blank page on the server's origin; `inits` run before any script. */
async function blankPage(...inits) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route(`${server.url}blank.html`, (r) => r.fulfill({ contentType: 'text/html', body: '<!doctype html><title>blank</title>' }));
  for (const init of inits) await page.addInitScript(init);
  await page.goto(`${server.url}blank.html`);
  return { context, page };
}

/** Loads the served model with `options` in the page, asks one query; returns what it saw. */
function loadAndAsk(page, options) {
  return page.evaluate(
    async ({ options, query }) => {
      const { Needle } = await import('/pkg/index.js');
      const { environments } = await import('/pkg/environments.js');
      const warnings = [];
      const logger = { warn: (m) => warnings.push(m), info() {}, error: (m) => warnings.push(m) };
      const needle = await Needle.load('/models/default.cact', { ...options, logger });
      const result = await needle.complete(query, { ...environments.smart_home, maxTokens: 64 });
      const info = needle.info;
      needle.dispose();
      return { info, result, warnings, usage: await Needle.cacheUsage() };
    },
    { options, query: QUERY },
  );
}

const refuseCaches = () => {
  CacheStorage.prototype.open = () => Promise.reject(new DOMException('The operation is insecure.', 'SecurityError'));
};
const refuseIndexedDb = () => {
  IDBFactory.prototype.open = () => {
    throw new DOMException('IndexedDB is disabled', 'InvalidStateError');
  };
};

test('Cache Storage refused: a warning, the model is kept in IndexedDB, the next load reads it from there', async () => {
  const { context, page } = await blankPage(refuseCaches);
  try {
    const first = await loadAndAsk(page, { worker: false });
    assert.equal(first.info.source, 'network');
    assert.equal(first.info.storage, 'indexeddb');
    assert.ok(first.warnings.some((w) => w.includes('cache-api') && w.includes('SecurityError')), first.warnings.join('\n'));
    assertSameAsNative(first.result, native, false);
    const second = await loadAndAsk(page, { worker: false });
    assert.equal(second.info.source, 'cache');
    assert.equal(second.usage.backend, 'indexeddb');
    assert.equal(second.usage.models.length, 1);
    assert.equal(second.usage.models[0].bytes, first.info.bytes);
    assert.ok(second.usage.quota > 0 && second.usage.usage >= first.info.bytes, JSON.stringify(second.usage));
    console.log(`cache refused -> ${second.usage.backend}: ${JSON.stringify({ usage: second.usage.usage, quota: second.usage.quota })}`);
  } finally {
    await context.close();
  }
});

test('Cache Storage and IndexedDB both refused: warnings, and the model runs uncached', async () => {
  const { context, page } = await blankPage(refuseCaches, refuseIndexedDb);
  try {
    const r = await loadAndAsk(page, { worker: false });
    assert.equal(r.info.source, 'network');
    assert.equal(r.info.storage, 'none');
    assert.ok(r.warnings.some((w) => w.includes('no model storage works')), r.warnings.join('\n'));
    assertSameAsNative(r.result, native, false);
    assert.equal(r.usage.backend, 'none');
  } finally {
    await context.close();
  }
});

test('a tiny quota: the cache write fails in the worker, the warning reaches the logger, the load goes on', async () => {
  const { context, page } = await blankPage();
  try {
    const cdp = await context.newCDPSession(page);
    const origin = server.url.replace(/\/$/, '');
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: 100_000 });
    const r = await loadAndAsk(page, {});
    assert.equal(r.info.thread, 'worker');
    assert.equal(r.info.source, 'network');
    assert.ok(r.warnings.some((w) => w.includes('quota is full')), r.warnings.join('\n'));
    assertSameAsNative(r.result, native, false);
    assert.equal(r.usage.backend, 'cache-api');
    assert.equal(r.usage.models.length, 0, 'nothing half-written stays');
    // estimate() keeps reporting the profile's quota under the override; it is a number all the same.
    assert.ok(Number.isFinite(r.usage.quota) && Number.isFinite(r.usage.usage), JSON.stringify(r.usage));
    console.log(`tiny quota: ${JSON.stringify({ usage: r.usage.usage, quota: r.usage.quota })}`);
  } finally {
    await context.close();
  }
});

test('a bad 200 is not served from Cache Storage: an HTML page is not stored, a cut file is evicted', async () => {
  // Issue 51: a host answering once with an error page, once with a file cut short, then with
  // the model; each load in a Worker, with Chromium's Cache Storage.
  const { context, page } = await blankPage();
  const model = readFileSync(defaultModel());
  const answers = [
    { contentType: 'text/html', body: '<!doctype html><title>rate limited</title>' },
    { contentType: 'application/octet-stream', body: model.subarray(0, 300_000) },
    { contentType: 'application/octet-stream', body: model },
  ];
  let requests = 0;
  await context.route(`${server.url}hostile/m.cact`, (r) => r.fulfill(answers[Math.min(requests++, 2)]));
  try {
    const tries = await page.evaluate(async () => {
      const { Needle } = await import('/pkg/index.js');
      const out = [];
      for (let i = 0; i < 3; i++) {
        const warnings = [];
        const logger = { warn: (m) => warnings.push(m), info() {} };
        const got = await Needle.load('/hostile/m.cact', { logger }).then(
          (n) => (n.dispose(), { source: n.info.source, thread: n.info.thread }),
          (e) => ({ code: e.code, message: e.message }),
        );
        out.push({ ...got, warnings, stored: (await Needle.cacheUsage()).models.map((m) => m.bytes) });
      }
      return out;
    });
    const [html, cut, good] = tries;
    assert.equal(html.code, 'fetch_failed', JSON.stringify(html));
    assert.deepEqual(html.stored, []);
    assert.match(cut.code, /^(bad_|truncated)/, JSON.stringify(cut));
    assert.deepEqual(cut.stored, [], 'the copy the engine refused is evicted');
    assert.ok(cut.warnings.some((w) => w.includes('evicted')), cut.warnings.join('\n'));
    assert.deepEqual([good.source, good.thread, good.stored], ['network', 'worker', [model.length]]);
    assert.equal(requests, 3);
  } finally {
    await context.close();
  }
});
