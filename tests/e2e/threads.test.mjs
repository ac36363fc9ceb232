// The threaded build in Chromium (Playwright, Debian's /usr/bin/chromium). On a cross-origin
// isolated page the package chooses it by itself, and its results are bit for bit the
// single-thread SIMD build's: the logits after every prompt position and the greedy tokens, with
// every matrix product and attention split across an odd number of threads. On a page that is not
// isolated the package falls back to the SIMD build, and a required thread count fails cleanly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { caseOf, defaultModel } from '../js/helpers.mjs';

const here = resolve(fileURLToPath(new URL('.', import.meta.url)));
const servers = {};
let context;
let profile;

before(async () => {
  const mounts = [['/e2e/', here]];
  servers.isolated = await startServer({ port: 0, model: defaultModel(), mounts });
  servers.plain = await startServer({ port: 0, model: defaultModel(), mounts, isolated: false });
  profile = mkdtempSync(join(tmpdir(), 'needle-e2e-threads-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

after(async () => {
  await context?.close();
  for (const s of Object.values(servers)) await s.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** A same-origin document of `server` that starts no engine of its own. */
async function pageOf(server) {
  const page = await context.newPage();
  await page.goto(`${server.url}pkg/package.json`);
  return page;
}

/** Loads the default model through the package with `options`; its info, or the error code. */
function load(page, options) {
  return page.evaluate(async (options) => {
    const { Needle } = await import('/pkg/index.js');
    try {
      const needle = await Needle.load('/models/default.cact', { cache: false, ...options });
      const r = await needle.complete('Turn on the kitchen lights', { maxTokens: 24 });
      const info = needle.info;
      needle.dispose();
      return { variant: info.variant, threads: info.threads, tokens: r.tokens, crossOriginIsolated };
    } catch (e) {
      return { code: e.code, message: e.message, crossOriginIsolated };
    }
  }, options);
}

test('an isolated page gets the threaded build, with the single-thread answer', async () => {
  const page = await pageOf(servers.isolated);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const auto = await load(page, {});
  assert.equal(auto.crossOriginIsolated, true);
  if (cores >= 2) {
    assert.equal(auto.variant, 'threaded', JSON.stringify(auto));
    assert.equal(auto.threads, Math.min(cores, 8));
  }
  const three = await load(page, { threads: 3 });
  assert.deepEqual([three.variant, three.threads], ['threaded', 3], JSON.stringify(three));
  const one = await load(page, { threads: false });
  assert.deepEqual([one.variant, one.threads], ['simd', 1]);
  assert.ok(one.tokens.length > 0);
  assert.deepEqual(three.tokens, one.tokens);
  assert.deepEqual(auto.tokens, one.tokens);
  await page.close();
});

test('the threaded build splitting everything equals the SIMD build bit for bit', async () => {
  const page = await pageOf(servers.isolated);
  const fixture = caseOf(defaultModel());
  const ids = fixture ? fixture.prompt_ids.map(Number) : [2, 17, 42, 9, 100, 5, 77, 3];
  const runs = await page.evaluate(
    async ({ ids }) => {
      const bytes = await (await fetch('/models/default.cact')).arrayBuffer();
      const run = (variant) =>
        new Promise((resolve) => {
          const worker = new Worker('/e2e/threads-worker.mjs', { type: 'module' });
          worker.onmessage = ({ data }) => {
            worker.terminate();
            resolve(data.error ? data : { ...data, logits: Array.from(new Uint32Array(data.logits.buffer)) });
          };
          worker.onerror = (e) => resolve({ error: `worker: ${e.message}` });
          worker.postMessage({ variant, bytes: bytes.slice(0), ids, threads: 3 });
        });
      return { threaded: await run('threaded'), simd: await run('simd') };
    },
    { ids },
  );
  assert.ifError(runs.threaded.error);
  assert.ifError(runs.simd.error);
  assert.equal(runs.threaded.threads, 3);
  assert.ok(runs.simd.logits.length >= ids.length);
  // Compared as bit patterns: -0 and NaN payloads count.
  assert.ok(
    runs.threaded.logits.length === runs.simd.logits.length && runs.threaded.logits.every((b, i) => b === runs.simd.logits[i]),
    'the threaded logits differ from the SIMD build\'s',
  );
  assert.ok(runs.simd.tokens.length > 0);
  assert.deepEqual(runs.threaded.tokens, runs.simd.tokens);
  await page.close();
});

test('a page that is not isolated falls back to the SIMD build; required threads fail cleanly', async () => {
  const page = await pageOf(servers.plain);
  const auto = await load(page, {});
  assert.equal(auto.crossOriginIsolated, false);
  assert.deepEqual([auto.variant, auto.threads], ['simd', 1], JSON.stringify(auto));
  const forced = await load(page, { threads: 2 });
  assert.equal(forced.code, 'unsupported', JSON.stringify(forced));
  assert.match(forced.message, /cross-origin isolated/);
  await page.close();
});
