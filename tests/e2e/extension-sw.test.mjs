// needle-web/extension/service-worker in Chromium (Playwright, Debian's /usr/bin/chromium): the
// project's extension assembled by tools/extension.mjs, its background replaced by the engine in
// the Manifest V3 service worker itself (where import() throws and there is no Worker); the
// unchanged popup connects to it, loads the bundled model offline with no offscreen document, and
// gives the native CLI's calls.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { assembleExtension } from '../../tools/extension.mjs';
import { ROOT, defaultModel, nativeRun } from '../js/helpers.mjs';

const MODEL = defaultModel();
const SW_ENGINE = `import { Needle, serveEngine } from './pkg/extension-sw.js';
let needle = null;
serveEngine(({ onProgress }) => (needle ??= Needle.load('./models/default.cact', { cache: 'none', onProgress })));
`;
let dir;
let profile;
let context;
const pageErrors = [];

/** Chromium names an unpacked extension after its real path: sha256, first 32 hex digits as a-p. */
function extensionId(path) {
  const hex = createHash('sha256').update(path).digest('hex').slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
}

before(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'needle-extension-sw-')));
  assembleExtension({ out: dir, model: MODEL });
  writeFileSync(join(dir, 'background.js'), SW_ENGINE);
  profile = mkdtempSync(join(tmpdir(), 'needle-extension-sw-profile-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--disable-extensions-except=${dir}`, `--load-extension=${dir}`],
  });
});

after(async () => {
  if (context) await context.close();
  for (const d of [dir, profile]) if (d) rmSync(d, { recursive: true, force: true });
});

test('the engine in the service worker: the popup answers as the native CLI, with no offscreen document', async () => {
  const page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await context.setOffline(true);
  await page.goto(`chrome-extension://${extensionId(dir)}/popup.html`);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 120_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await page.textContent('#status'));
  const env = JSON.parse(readFileSync(join(ROOT, 'www/presets/smart_home.json'), 'utf8'));
  const query = 'Turn on the kitchen lights';
  const got = await page.evaluate(
    async ({ query, tools, system }) => {
      const { connectEngine } = await import('./pkg/extension.js');
      const needle = await connectEngine();
      try {
        const r = await needle.complete(query, { tools, system, constrained: true, valueSearch: true });
        const chunks = [];
        for await (const c of needle.stream(query, { tools, system, constrained: true, valueSearch: true })) if ('token' in c) chunks.push(c.token);
        const contexts = await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
        return { tokens: r.tokens, calls: r.function_calls, streamed: chunks, offscreen: contexts.length, thread: needle.info.thread, variant: needle.info.variant };
      } finally {
        needle.dispose();
      }
    },
    { query, tools: env.tools, system: env.system },
  );
  const native = nativeRun(MODEL, query, JSON.stringify(env.tools), ['--system', env.system, '--constrained', '--value-search']);
  assert.deepEqual(got.tokens, native.tokens);
  assert.deepEqual(got.streamed, native.tokens);
  assert.deepEqual(got.calls, native.function_calls);
  assert.equal(got.offscreen, 0);
  assert.equal(got.variant, 'simd');
  await context.setOffline(false);
  assert.deepEqual(pageErrors, []);
});
