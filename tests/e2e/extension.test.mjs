// The offline browser extension in Chromium (Playwright, Debian's /usr/bin/chromium): assembled by
// tools/extension.mjs, loaded unpacked, its popup page answers from the bundled model with the
// network switched off and gives the native CLI's calls (schema-constrained, extractive by
// default); its choices survive a reopening, which reuses the engine in the offscreen document
// (no model reload); a page's malformed message to the shared engine is refused and leaves it
// answering; its options page swaps in another model (a file, or needle3 by name from the Hub).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { assembleExtension } from '../../tools/extension.mjs';
import { ROOT, defaultModel, nativeRun } from '../js/helpers.mjs';

const MODEL = defaultModel();
let dir;
let profile;
let context;
let page;
let popupUrl;
const requests = [];
const pageErrors = [];

/** Chromium names an unpacked extension after its real path: sha256, first 32 hex digits as a-p. */
function extensionId(path) {
  const hex = createHash('sha256').update(path).digest('hex').slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
}

const waitState = (...states) =>
  page.waitForFunction((s) => s.includes(document.body.dataset.state), states, { timeout: 120_000 });

async function ask(query) {
  await page.fill('#query', query);
  await page.click('#run');
  await waitState('done', 'error');
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'done', await page.textContent('#status'));
  return JSON.parse(await page.evaluate(() => document.body.dataset.result));
}

before(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'needle-extension-'))); // Chromium hashes the real path
  assembleExtension({ out: dir, model: MODEL });
  profile = mkdtempSync(join(tmpdir(), 'needle-extension-profile-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--disable-extensions-except=${dir}`, `--load-extension=${dir}`],
  });
  context.on('request', (r) => requests.push(r.url()));
  page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  popupUrl = `chrome-extension://${extensionId(dir)}/popup.html`;
});

after(async () => {
  if (context) await context.close();
  for (const d of [dir, profile]) if (d) rmSync(d, { recursive: true, force: true });
});

let firstOpenMs;

test('the popup loads the bundled model with the network off', async () => {
  await context.setOffline(true);
  const t0 = Date.now();
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  firstOpenMs = Date.now() - t0;
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await page.textContent('#status'));
  assert.match(await page.textContent('#model-info'), /Needle 3 .* simd/);
  const options = await page.$$eval('#preset option', (os) => os.map((o) => o.textContent));
  assert.ok(options.length >= 7 && options.includes('Smart home (environment)'), options.join(', '));
  assert.deepEqual(requests.filter((u) => !u.startsWith('chrome-extension://')), []);
  assert.deepEqual(pageErrors, []);
});

test('its calls are the native CLI\'s, values searched whole: extractive by default, constrained with the toggle off', async () => {
  const env = JSON.parse(readFileSync(join(ROOT, 'www/presets/productivity.json'), 'utf8'));
  await page.selectOption('#preset', { label: 'Productivity (environment)' });
  const tools = await page.inputValue('#tools');
  assert.deepEqual(JSON.parse(tools), env.tools);
  const query = 'Create a task called quarterly budget review due Friday';
  for (const [extractive, flags] of [[true, ['--extractive', '--value-search']], [false, ['--constrained', '--value-search']]]) {
    await page.setChecked('#extractive', extractive);
    const result = await ask(query);
    // The preset's prefix came prefilled with the extension (tools/extension.mjs).
    assert.equal(result.snapshot, 'loaded');
    assert.ok(result.usage.cached_tokens > 50, `${result.usage.cached_tokens} prompt tokens reused`);
    const native = nativeRun(MODEL, query, tools, ['--system', env.system, ...flags]);
    assert.deepEqual(result.tokens, native.tokens, `extractive ${extractive}`);
    assert.deepEqual(result.function_calls, native.function_calls);
    const shown = await page.$$eval('#calls .call h3', (hs) => hs.map((h) => h.textContent));
    assert.deepEqual(shown, native.function_calls.map((c) => c.name));
  }
  assert.deepEqual(requests.filter((u) => !u.startsWith('chrome-extension://')), []);
});

test('a reopened popup keeps the tool set, the request and the toggle, and reuses the loaded engine', async () => {
  const firstLoad = await page.evaluate(() => document.body.dataset.modelLoadedAt);
  const t0 = Date.now();
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  const reopenMs = Date.now() - t0;
  console.log(`popup ready: first open ${firstOpenMs} ms (engine document started, model loaded), second open ${reopenMs} ms`);
  assert.ok(firstLoad, 'the first open reported when its model was loaded');
  assert.equal(await page.evaluate(() => document.body.dataset.modelLoadedAt), firstLoad, 'the model was not loaded again');
  assert.equal(await page.$eval('#preset', (s) => s.selectedOptions[0].textContent), 'Productivity (environment)');
  assert.equal(await page.inputValue('#query'), 'Create a task called quarterly budget review due Friday');
  assert.equal(await page.isChecked('#extractive'), false);
  await context.setOffline(false);
  assert.deepEqual(pageErrors, []);
});

test('a popup cancels a generation in the shared engine with an abort message', async () => {
  const outcome = await page.evaluate(async () => {
    const { connectEngine } = await import('./pkg/extension.js');
    const engine = await connectEngine();
    const stop = new AbortController();
    let tokens = 0;
    try {
      await engine.complete('Turn on the kitchen lights and tell me a long story', {
        maxTokens: 2000, temperature: 1, seed: 3, signal: stop.signal, onToken: () => ++tokens === 2 && stop.abort(),
      });
      return { finished: true };
    } catch (e) {
      return { code: e.code, name: e.name, stop: e.result && e.result.stop_reason, tokens };
    } finally {
      engine.dispose();
    }
  });
  assert.deepEqual({ code: outcome.code, name: outcome.name, stop: outcome.stop }, { code: 'aborted', name: 'AbortError', stop: 'aborted' }, JSON.stringify(outcome));
  assert.ok(outcome.tokens < 50, `stopped within a few tokens (${outcome.tokens})`);
});

test("a page's malformed message is refused invalid_argument; the shared engine answers the next page", async () => {
  // Issue 51's reproducer: a number where the engine reads text used to trap the shared engine,
  // and every popup's request after it rejected engine_trap.
  const outcome = await page.evaluate(async () => {
    const port = chrome.runtime.connect({ name: 'needle-web-engine' });
    const sent = [
      { type: 'tokenize', id: 1, text: 5 },
      { type: 'complete', id: 2, engine: { numerics: 7 }, request: { query: 'x' } },
      { type: 'render', id: 3, query: {} },
      { type: 'constructor', id: 4 },
    ];
    const codes = await new Promise((resolve) => {
      const got = {};
      port.onMessage.addListener((m) => {
        if (m.type === 'error' || m.type === 'result') got[m.id] = m.error ? m.error.code : 'result';
        if (Object.keys(got).length === sent.length) resolve(sent.map((m) => got[m.id]));
      });
      for (const m of sent) port.postMessage(m);
    });
    port.disconnect();
    const { connectEngine } = await import('./pkg/extension.js');
    const engine = await connectEngine();
    try {
      const r = await engine.complete('Turn on the kitchen lights', { maxTokens: 8 });
      return { codes, tokens: r.tokens.length };
    } catch (e) {
      return { codes, error: `${e.code}: ${e.message}` };
    } finally {
      engine.dispose();
    }
  });
  assert.deepEqual(outcome.codes, ['invalid_argument', 'invalid_argument', 'invalid_argument', 'invalid_argument'], JSON.stringify(outcome));
  assert.ok(outcome.tokens > 0, JSON.stringify(outcome));
});

test('the options page swaps in a model by name or from a file; the popup runs it offline, then the bundled one again', async () => {
  const own = join(ROOT, 'tests/fixtures/v2/mixed_window/model.cact');
  const options = await context.newPage();
  options.on('pageerror', (e) => pageErrors.push(String(e)));
  const settled = () => options.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state), null, { timeout: 120_000 });
  await options.goto(popupUrl.replace('popup.html', 'options.html'));
  assert.match(await options.textContent('#current'), /bundled demo model/);

  // Not a model: refused with the engine's error, nothing replaced.
  await options.setInputFiles('#file', join(ROOT, 'tests/fixtures/v2/mixed_window/case.json'));
  await settled();
  assert.equal(await options.evaluate(() => document.body.dataset.state), 'error');
  assert.match(await options.textContent('#message'), /^Not changed: .*\(\w+\)$/);
  assert.match(await options.textContent('#current'), /bundled demo model/);

  // A URL that cannot be reached (offline): refused with the package's fetch error.
  await context.setOffline(true);
  await options.fill('#url', 'https://example.com/needle3.cact');
  await options.click('#download');
  await settled();
  assert.equal(await options.evaluate(() => document.body.dataset.state), 'error');
  assert.match(await options.textContent('#message'), /^Not changed: .*\(fetch_failed\)$/);
  await context.setOffline(false);

  // A model name: needle3 resolves to upstream's file on the Hub, answered here by a fixture.
  const hubFile = 'https://huggingface.co/Cactus-Compute/needle3/resolve/main/needle3.cact';
  const hubRequests = [];
  const body = readFileSync(join(ROOT, 'tests/fixtures/v3/local_global_taps/model.cact'));
  await context.route('https://huggingface.co/**', (route) => {
    hubRequests.push(route.request().url());
    route.fulfill({ status: 200, body, headers: { 'access-control-allow-origin': '*', 'content-type': 'application/octet-stream' } });
  });
  await options.fill('#url', 'needle3');
  await options.click('#download');
  await settled();
  assert.equal(await options.evaluate(() => document.body.dataset.state), 'done', await options.textContent('#message'));
  assert.deepEqual([...new Set(hubRequests)], [hubFile]);
  assert.match(await options.textContent('#current'), /^The popup runs needle3 \(Needle 3, /);
  await context.unrouteAll();
  await context.setOffline(true);
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  assert.match(await page.textContent('#model-info'), /^needle3 · Needle 3 · /);
  await context.setOffline(false);

  await options.setInputFiles('#file', own);
  await settled();
  assert.equal(await options.evaluate(() => document.body.dataset.state), 'done', await options.textContent('#message'));
  assert.match(await options.textContent('#current'), /model\.cact \(Needle 2, /);

  await context.setOffline(true);
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  assert.match(await page.textContent('#model-info'), /^model\.cact · Needle 2 · /);
  // The fixture's context (512) is too short for an environment's tools: one small tool instead.
  const tools = JSON.stringify([{ name: 'lights', description: 'Turn the lights on or off',
    parameters: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] } }]);
  await page.click('#tools-box summary');
  await page.fill('#tools', tools);
  await page.fill('#system', '');
  await page.setChecked('#extractive', false);
  const query = 'Turn on the kitchen lights';
  const result = await ask(query);
  const native = nativeRun(own, query, tools, ['--constrained', '--value-search']);
  assert.deepEqual(result.tokens, native.tokens);
  assert.deepEqual(result.function_calls, native.function_calls);
  await context.setOffline(false);

  await options.click('#reset');
  await settled();
  assert.match(await options.textContent('#current'), /bundled demo model/);
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  assert.match(await page.textContent('#model-info'), /^bundled demo model · Needle 3 · /);
  await options.close();
  assert.deepEqual(pageErrors, []);
});
