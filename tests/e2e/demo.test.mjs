// The demo page in Chromium (Playwright, Debian's /usr/bin/chromium): first load from the network,
// streamed generation equal to the native CLI, Stop, cached reload (its first request on the
// stored snapshot of the preset's tools), no network during generation,
// a corrupted cache entry refetched, offline use, one acceptance suite equal to the CLI. Leaves a screenshot and load timings in target/e2e/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { ROOT, assertSameAsNative, cli, defaultModel, nativeRun } from '../js/helpers.mjs';

const MODEL = defaultModel();
const OUT = join(ROOT, 'target/e2e');
const MODEL_PATH = '/models/default.cact';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let server;
let context;
let page;
let profile;
const served = []; // every request the server answered
const timings = {};
const pageErrors = [];

const modelFetches = () => served.filter((r) => r.path === MODEL_PATH).length;
const state = () => page.evaluate(() => document.body.dataset.state);
const waitState = (...states) =>
  page.waitForFunction((s) => s.includes(document.body.dataset.state), states, { timeout: 120_000 });

async function openAndTime(action) {
  const t0 = Date.now();
  await action();
  await waitState('ready', 'error');
  const wall = Date.now() - t0;
  assert.equal(await state(), 'ready', await page.textContent('#status'));
  const inPage = Number(await page.evaluate(() => document.body.dataset.loadMs));
  return { wall_ms: wall, model_load_ms: inPage, source: await page.evaluate(() => document.body.dataset.modelSource) };
}

/** Clicks Run and records each (state, streamed) change the page goes through until it settles. */
async function runQuery({ stopAfter = 0 } = {}) {
  await page.evaluate((stopAfter) => {
    window.__trace = [];
    const body = document.body;
    const obs = new MutationObserver(() => {
      const streamed = Number(body.dataset.streamed || 0);
      window.__trace.push({ state: body.dataset.state, streamed });
      if (stopAfter && streamed >= stopAfter && body.dataset.state === 'running') document.getElementById('stop').click();
    });
    obs.observe(body, { attributes: true, attributeFilter: ['data-state', 'data-streamed'] });
    window.__obs = obs;
  }, stopAfter);
  await page.click('#run');
  await waitState('done', 'aborted', 'error');
  const trace = await page.evaluate(() => (window.__obs.disconnect(), window.__trace));
  const text = await page.textContent('#result-json');
  return { trace, result: text ? JSON.parse(text) : null, state: await state() };
}

before(async () => {
  mkdirSync(OUT, { recursive: true });
  server = await startServer({ port: 0, model: MODEL, onRequest: (r) => served.push(r) });
  profile = mkdtempSync(join(tmpdir(), 'needle-e2e-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', (e) => pageErrors.push(String(e)));
});

after(async () => {
  writeFileSync(join(OUT, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
  if (context) await context.close();
  if (server) await server.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the first visit downloads the embedded model once, in a cross-origin isolated page', async () => {
  timings.first_load = await openAndTime(() => page.goto(server.url));
  assert.equal(timings.first_load.source, 'network');
  assert.equal(modelFetches(), 1);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  // Isolated with 2+ cores: the threaded build (pkg/README.md, Threads).
  const variant = (await page.evaluate(() => navigator.hardwareConcurrency)) >= 2 ? 'threaded' : 'simd';
  assert.ok(served.some((r) => r.path === `/pkg/wasm/${variant}/needle_bg.wasm` && r.status === 200));
  assert.match(await page.textContent('#model-info'), new RegExp(variant));
  assert.deepEqual(pageErrors, []);
});

test('a query streams tokens one by one and ends with the same result as the native CLI', async () => {
  const query = await page.inputValue('#query');
  const tools = await page.inputValue('#tools');
  const system = await page.inputValue('#system');
  const { trace, result, state: end } = await runQuery();
  assert.equal(end, 'done');
  const running = trace.filter((t) => t.state === 'running').map((t) => t.streamed);
  assert.ok(running.length >= 2, 'the page updated while generating');
  for (let i = 1; i < running.length; i++) assert.ok(running[i] - running[i - 1] <= 1, 'one token per update');
  assert.equal(Math.max(...running), result.tokens.length);

  const native = nativeRun(MODEL, query, tools, ['--max-tokens', '256', ...(system ? ['--system', system] : [])]);
  assertSameAsNative(result, native, false);

  // The calls show as cards, without their <tool_call> markup printed above them.
  assert.ok(result.function_calls.length > 0, 'the default query makes calls');
  assert.equal(await page.$$eval('#calls .call', (cards) => cards.length), result.function_calls.length);
  const answer = await page.textContent('#answer');
  assert.ok(!answer.includes('<tool_call>'), `the answer shows the markup: ${answer}`);

  const stats = await page.$$eval('#stats dd', (dds) => Object.fromEntries(dds.map((d) => [d.dataset.stat, d.textContent])));
  assert.ok(Number(stats['tokens/s']) > 0);
  assert.match(stats['KV memory'], /B$/);
  await page.screenshot({ path: join(OUT, 'demo.png'), fullPage: true });
});

test('Stop aborts a generation mid-stream and keeps what was generated', async () => {
  await page.evaluate(() => (document.getElementById('settings').open = true));
  await page.fill('#max-tokens', '4000');
  await page.fill('#temperature', '1');
  await page.fill('#seed', '3');
  const { result, state: end } = await runQuery({ stopAfter: 1 });
  assert.equal(end, 'aborted');
  assert.equal(result.stop_reason, 'aborted');
  assert.ok(result.usage.completion_tokens >= 1);
  assert.match(await page.textContent('#stats'), /stopped by you/);
  await page.fill('#max-tokens', '256');
  await page.fill('#temperature', '0');
  await page.fill('#seed', '0');
});

test('the package runs the engine in a module worker and the page stays responsive through prefill', async (t) => {
  const probe = await page.evaluate(async () => {
    const { Needle } = await import('./pkg/index.js');
    const needle = await Needle.load('./models/default.cact');
    // A long prompt (most of the context) makes prefill one long wasm call: inline, it would
    // freeze the page throughout.
    const unit = 'Please turn on every light in the house, then dim them to half. ';
    const perUnit = (await needle.tokenize(unit)).length;
    const query = unit.repeat(Math.floor((needle.info.capacity * 0.7) / perUnit));
    let last = performance.now();
    let worstGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const r = await needle.complete(query, { maxTokens: 8 });
    clearInterval(timer);
    needle.dispose();
    return {
      thread: needle.info.thread,
      source: needle.info.source,
      prefill: r.timings.prefill_ms,
      worstGap,
      cached: await Needle.cached('./models/default.cact'),
    };
  });
  assert.equal(probe.thread, 'worker');
  assert.equal(probe.source, 'cache');
  assert.equal(probe.cached, true);
  // Blocking is only measurable when prefill is long against the 5 ms timer (not on the tiniest models).
  if (probe.prefill < 100) return t.diagnostic(`prefill ${probe.prefill.toFixed(1)} ms: too short to measure blocking`);
  assert.ok(probe.worstGap < probe.prefill / 2, `main thread blocked ${probe.worstGap.toFixed(0)} ms (prefill ${probe.prefill.toFixed(0)} ms)`);
});

test('generation sends no network request', async () => {
  const before = served.length;
  const seen = [];
  const onRequest = (r) => seen.push(r.url());
  context.on('request', onRequest);
  const { state: end } = await runQuery();
  context.off('request', onRequest);
  assert.equal(end, 'done');
  assert.deepEqual(seen, []);
  assert.equal(served.length, before);
});

test('a reload takes the model from Cache Storage without fetching it again', async () => {
  const fetchesBefore = modelFetches();
  timings.cached_load = await openAndTime(() => page.reload());
  assert.equal(timings.cached_load.source, 'cache');
  assert.equal(modelFetches(), fetchesBefore);
  const listed = await page.$$eval('#cached-list li .url', (names) =>
    names.filter((n) => !n.textContent.startsWith('tools snapshot')).length,
  );
  assert.equal(listed, 1);
});

test("a reload's first request runs on from the preset's stored prefix snapshot", async () => {
  const prepared = () => page.evaluate(() => document.body.dataset.prepared);
  await page.waitForFunction(() => !['running', undefined].includes(document.body.dataset.prepared));
  assert.equal(await prepared(), 'loaded', await page.textContent('#prepared'));
  const query = await page.inputValue('#query');
  const tools = await page.inputValue('#tools');
  const system = await page.inputValue('#system');
  const { result, state: end } = await runQuery();
  assert.equal(end, 'done');
  assert.equal(result.snapshot, 'loaded');
  assert.ok(result.usage.cached_tokens > 50, `${result.usage.cached_tokens} prompt tokens reused`);
  const native = nativeRun(MODEL, query, tools, ['--max-tokens', '256', ...(system ? ['--system', system] : [])]);
  assertSameAsNative(result, native, false);
  timings.snapshot_reload = { prefill_ms: result.timings.prefill_ms, cached_tokens: result.usage.cached_tokens };
});

test('a corrupted cache entry is detected, evicted and fetched again', async () => {
  const url = new URL(MODEL_PATH, server.url).href;
  await page.evaluate(async (url) => {
    const cache = await caches.open('needle-web-models-v1');
    const hit = await cache.match(url);
    const bytes = new Uint8Array(await hit.arrayBuffer());
    bytes[bytes.length >> 1] ^= 0x5a; // same length, one byte flipped
    await cache.put(url, new Response(bytes, { headers: hit.headers }));
  }, url);
  const fetchesBefore = modelFetches();
  const reloaded = await openAndTime(() => page.reload());
  assert.equal(reloaded.source, 'network');
  assert.equal(modelFetches(), fetchesBefore + 1);
  const again = await openAndTime(() => page.reload());
  assert.equal(again.source, 'cache', 'the refetched copy was stored intact');
});

test('the model picker loads a local file', async () => {
  await page.check('input[name="source"][value="file"]');
  const loaded = await openAndTime(() => page.setInputFiles('#model-file', MODEL));
  assert.equal(loaded.source, 'blob');
  const { state: end, result } = await runQuery();
  assert.equal(end, 'done');
  assert.ok(result.tokens.length > 0);
});

test('the page and the model work offline after the first load', async () => {
  await context.setOffline(true);
  try {
    const offline = await openAndTime(() => page.reload());
    assert.equal(offline.source, 'cache');
    const { state: end } = await runQuery();
    assert.equal(end, 'done');
  } finally {
    await context.setOffline(false);
  }
  assert.deepEqual(pageErrors, []);
});

test("the package's browser example answers with its bundled default model, in a worker, as the native CLI does", async () => {
  // pkg/examples/browser.html: no bundler (an import map), Needle.load() with no source.
  const example = await context.newPage();
  example.on('pageerror', (e) => pageErrors.push(String(e)));
  try {
    await example.goto(new URL('pkg/examples/browser.html', server.url).href);
    await example.waitForSelector('#ask button:not([disabled])', { timeout: 120_000 });
    assert.match(await example.textContent('#status'), /in a Web Worker/);
    assert.ok(served.some((r) => r.path === '/pkg/models/default.cact' && r.status === 200));
    const query = 'Turn on the kitchen lights';
    await example.selectOption('#environment', 'smart_home');
    await example.fill('#query', query);
    await example.click('#ask button');
    await example.waitForFunction(() => /tok\/s$/.test(document.getElementById('status').textContent), null, { timeout: 120_000 });
    const native = JSON.parse(cli(['run', '--preset', 'smart_home', '--query', query, '--constrained', '--json']));
    assert.ok(native.function_calls.length > 0);
    assert.deepEqual(JSON.parse(await example.textContent('#calls')), native.function_calls);
  } finally {
    await example.close();
  }
  assert.deepEqual(pageErrors, []);
});

test('acceptance suites run in the browser with the results of the native CLI: greedy, constrained, extractive, value search', async () => {
  // Held-out cases through the package in Chromium (SIMD build, module worker), each compared
  // with the native CLI; the pass rates go to target/e2e/acceptance.json. Productivity has
  // free-text arguments, so its extractive runs exercise copying from the query, and value
  // search the rewinding of the KV cache in wasm.
  const MODES = { greedy: {}, constrained: { constrained: true }, extractive: { extractive: true },
    searched: { extractive: true, valueSearch: true } };
  const FLAGS = { greedy: [], constrained: ['--constrained'], extractive: ['--extractive'],
    searched: ['--extractive', '--value-search'] };
  const report = [];
  for (const [env, modes] of [['smart_home', ['greedy', 'constrained']], ['productivity', ['extractive', 'searched']]]) {
    const suite = JSON.parse(readFileSync(join(ROOT, `tests/fixtures/acceptance/${env}.json`), 'utf8'));
    const tools = JSON.stringify(suite.tools);
    const results = await page.evaluate(async ({ cases, tools, system, runs }) => {
      const { Needle } = await import('./pkg/index.js');
      const needle = await Needle.load('./models/default.cact');
      const out = [];
      for (const [i, c] of cases.entries()) {
        for (const [mode, options] of runs) {
          const r = await needle.complete(c.query, { tools, system, ...options });
          out.push({ i, query: c.query, mode, tokens: r.tokens, calls: r.function_calls, confidence: r.confidence });
        }
      }
      needle.dispose();
      return out;
    }, { cases: suite.cases, tools, system: suite.system, runs: modes.map((m) => [m, MODES[m]]) });
    const passed = Object.fromEntries(modes.map((m) => [m, [0, 0]]));
    for (const r of results) {
      const native = nativeRun(MODEL, r.query, tools, ['--system', suite.system, ...FLAGS[r.mode]]);
      assert.deepEqual(r.tokens, native.tokens, `${env}: ${r.query} (${r.mode})`);
      assert.deepEqual(r.calls, native.function_calls);
      assert.ok(Math.abs(r.confidence - native.confidence) < 1e-4, `${env}: ${r.query} (${r.mode}): confidence ${r.confidence} vs ${native.confidence}`);
      passed[r.mode][0] += sameCalls(r.calls, suite.cases[r.i].calls);
      passed[r.mode][1] += 1;
    }
    report.push({ env, passed });
  }
  writeFileSync(join(OUT, 'acceptance.json'), `${JSON.stringify(report, null, 2)}\n`);
});

/** Upstream's harness comparison: calls as a multiset, strings case-folded (2.0 and 2 are one JS number). */
function sameCalls(got, want) {
  const fold = (v) => (typeof v === 'string' ? v.toLowerCase()
    : Array.isArray(v) ? v.map(fold)
    : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, fold(v[k])]))
    : v);
  const keys = (calls) => calls.map((c) => JSON.stringify(fold({ name: c.name, arguments: c.arguments ?? {} }))).sort();
  return JSON.stringify(keys(got)) === JSON.stringify(keys(want));
}
