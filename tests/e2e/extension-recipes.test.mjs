// needle-web/extension's two recipes in Chromium (Playwright, Debian's /usr/bin/chromium), each
// loaded unpacked with the network off:
// - pkg/examples/extension as published, the package copied beside it as `needle-web/` (the files
//   pkg/package.json publishes): its popup's calls are the native CLI's;
// - the project's extension (tools/extension.mjs) with its background replaced by the engine in
//   the Manifest V3 service worker itself (where import() throws and there is no Worker): the
//   unchanged popup connects to it, with no offscreen document, and streams the native CLI's tokens.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { assembleExtension } from '../../tools/extension.mjs';
import { ROOT, defaultModel, nativeRun } from '../js/helpers.mjs';

const MODEL = defaultModel();
const PKG = join(ROOT, 'pkg');
const SMART_HOME = JSON.parse(readFileSync(join(ROOT, 'www/presets/smart_home.json'), 'utf8'));
const QUERY = 'Turn on the kitchen lights';
const SW_ENGINE = `import { Needle, serveEngine } from './pkg/extension-sw.js';
let needle = null;
serveEngine(({ onProgress }) => (needle ??= Needle.load('./models/default.cact', { cache: 'none', onProgress })));
`;
const cleanup = [];

/** Chromium names an unpacked extension after its real path: sha256, first 32 hex digits as a-p. */
function extensionId(path) {
  const hex = createHash('sha256').update(path).digest('hex').slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
}

const tempDir = (name) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), name))); // Chromium hashes the real path
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** Chromium with the extension at `dir` loaded unpacked and the network off; its first page. */
async function loadUnpacked(dir) {
  const context = await chromium.launchPersistentContext(tempDir('needle-extension-profile-'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--disable-extensions-except=${dir}`, `--load-extension=${dir}`],
  });
  cleanup.unshift(() => context.close());
  await context.setOffline(true);
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors, url: (file) => `chrome-extension://${extensionId(dir)}/${file}` };
}

after(async () => {
  for (const f of cleanup) await f();
});

test('pkg/examples/extension, the package copied beside it: its popup gives the native CLI\'s calls', async () => {
  const dir = tempDir('needle-extension-example-');
  cpSync(join(PKG, 'examples/extension'), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  for (const f of ['package.json', ...manifest.files]) cpSync(join(PKG, f), join(dir, 'needle-web', f), { recursive: true });
  const { page, errors, url } = await loadUnpacked(dir);
  await page.goto(url('popup.html'));
  await page.waitForFunction(() => document.body.textContent.startsWith('['), null, { timeout: 120_000 });
  const calls = JSON.parse(await page.textContent('body'));
  const native = nativeRun(MODEL, QUERY, JSON.stringify(SMART_HOME.tools), ['--system', SMART_HOME.system]);
  assert.deepEqual(calls, native.function_calls);
  assert.deepEqual(errors, []);
});

test('the engine in the service worker: the popup answers as the native CLI, with no offscreen document', async () => {
  const dir = tempDir('needle-extension-sw-');
  assembleExtension({ out: dir, model: MODEL });
  writeFileSync(join(dir, 'background.js'), SW_ENGINE);
  const { page, errors, url } = await loadUnpacked(dir);
  await page.goto(url('popup.html'));
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 120_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await page.textContent('#status'));
  const got = await page.evaluate(
    async ({ query, tools, system }) => {
      const { connectEngine } = await import('./pkg/extension.js');
      const needle = await connectEngine();
      try {
        const options = { tools, system, constrained: true, valueSearch: true };
        const r = await needle.complete(query, options);
        const chunks = [];
        for await (const c of needle.stream(query, options)) if ('token' in c) chunks.push(c.token);
        const contexts = await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
        return { tokens: r.tokens, calls: r.function_calls, streamed: chunks, offscreen: contexts.length, variant: needle.info.variant };
      } finally {
        needle.dispose();
      }
    },
    { query: QUERY, tools: SMART_HOME.tools, system: SMART_HOME.system },
  );
  const native = nativeRun(MODEL, QUERY, JSON.stringify(SMART_HOME.tools), ['--system', SMART_HOME.system, '--constrained', '--value-search']);
  assert.deepEqual(got.tokens, native.tokens);
  assert.deepEqual(got.streamed, native.tokens);
  assert.deepEqual(got.calls, native.function_calls);
  assert.equal(got.offscreen, 0);
  assert.equal(got.variant, 'simd');
  assert.deepEqual(errors, []);
});
