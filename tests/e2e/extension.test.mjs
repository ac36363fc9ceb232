// The offline browser extension in Chromium (Playwright, Debian's /usr/bin/chromium): assembled by
// tools/extension.mjs, loaded unpacked, its popup page answers from the bundled model with the
// network switched off and gives the native CLI's calls (schema-constrained, extractive by
// default); its choices survive a reopening.
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

test('the popup loads the bundled model with the network off', async () => {
  await context.setOffline(true);
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await page.textContent('#status'));
  assert.match(await page.textContent('#model-info'), /Needle 3 .* simd/);
  const options = await page.$$eval('#preset option', (os) => os.map((o) => o.textContent));
  assert.ok(options.length >= 7 && options.includes('Smart home (environment)'), options.join(', '));
  assert.deepEqual(requests.filter((u) => !u.startsWith('chrome-extension://')), []);
  assert.deepEqual(pageErrors, []);
});

test('its calls are the native CLI\'s: extractive by default, constrained with the toggle off', async () => {
  const env = JSON.parse(readFileSync(join(ROOT, 'www/presets/productivity.json'), 'utf8'));
  await page.selectOption('#preset', { label: 'Productivity (environment)' });
  const tools = await page.inputValue('#tools');
  assert.deepEqual(JSON.parse(tools), env.tools);
  const query = 'Create a task called quarterly budget review due Friday';
  for (const [extractive, flags] of [[true, ['--extractive']], [false, ['--constrained']]]) {
    await page.setChecked('#extractive', extractive);
    const result = await ask(query);
    const native = nativeRun(MODEL, query, tools, ['--system', env.system, ...flags]);
    assert.deepEqual(result.tokens, native.tokens, `extractive ${extractive}`);
    assert.deepEqual(result.function_calls, native.function_calls);
    const shown = await page.$$eval('#calls .call h3', (hs) => hs.map((h) => h.textContent));
    assert.deepEqual(shown, native.function_calls.map((c) => c.name));
  }
  assert.deepEqual(requests.filter((u) => !u.startsWith('chrome-extension://')), []);
});

test('a reopened popup keeps the tool set, the request and the toggle', async () => {
  await page.goto(popupUrl);
  await waitState('ready', 'error');
  assert.equal(await page.$eval('#preset', (s) => s.selectedOptions[0].textContent), 'Productivity (environment)');
  assert.equal(await page.inputValue('#query'), 'Create a task called quarterly budget review due Friday');
  assert.equal(await page.isChecked('#extractive'), false);
  await context.setOffline(false);
  assert.deepEqual(pageErrors, []);
});
