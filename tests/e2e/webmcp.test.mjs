// needle-web/webmcp in Chromium with its native WebMCP (--enable-features=WebMCP): pageTools()
// lists a page's tools, registered imperatively and declared as <form toolname>, and needle.run()
// executes the embedded model's calls through the page's own executeTool: the execute function
// ran (or the form was filled and submitted) with the calls' arguments, which are the native
// CLI's for the same tool list. Without WebMCP, pageTools() rejects with `unsupported`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { ROOT, defaultModel, nativeRun } from '../js/helpers.mjs';
import { declarativePage, imperativePage } from './webmcp/pages.mjs';

const MODEL = defaultModel();
const env = (name) => JSON.parse(readFileSync(join(ROOT, `www/presets/${name}.json`), 'utf8'));
const FLAGS = ['--extractive', '--value-search'];

let server;
let browser;
let dir;
const pageErrors = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'needle-webmcp-'));
  writeFileSync(join(dir, 'house.html'), imperativePage(env('smart_home')));
  writeFileSync(join(dir, 'tasks.html'), declarativePage(env('productivity')));
  server = await startServer({ port: 0, model: MODEL, isolated: false, mounts: [['/t/', dir]] });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--enable-features=WebMCP'],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** On `path`: pageTools() + needle.run(query) with the embedded model; what ran and what the page logged. */
async function runOnPage(path, query) {
  const page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(new URL(path, server.url).href);
  await page.waitForFunction(() => document.body.dataset.ready);
  const out = await page.evaluate(async (query) => {
    const { Needle } = await import('/pkg/index.js');
    const { pageTools } = await import('/pkg/webmcp.js');
    const needle = await Needle.load('/models/default.cact', { cache: 'none' });
    try {
      const tools = await pageTools();
      // One executed answer: the small model was trained on single turns.
      const r = await needle.run(query, { tools, extractive: true, valueSearch: true, maxSteps: 1 });
      const schemas = tools.map(({ fn, ...schema }) => schema);
      return { schemas, steps: r.steps, log: window.webmcpLog };
    } finally {
      needle.dispose();
    }
  }, query);
  await page.close();
  return out;
}

for (const [path, query, kind] of [
  ['/t/house.html', 'Turn on the kitchen lights', 'registerTool'],
  ['/t/tasks.html', 'Add a high priority task to call the bank', 'a declarative <form toolname>'],
]) {
  test(`pageTools() + run(): "${query}" runs ${kind} through executeTool`, async () => {
    const { schemas, steps, log } = await runOnPage(path, query);
    const native = nativeRun(MODEL, query, JSON.stringify(schemas), FLAGS);
    assert.ok(native.function_calls.length > 0, 'the embedded model answers this page with a call');
    assert.equal(steps.length, 1);
    assert.deepEqual(steps[0].function_calls, native.function_calls);
    // The page saw each call once, with its arguments (a form: its fields, the call's among them).
    assert.equal(log.length, native.function_calls.length, JSON.stringify(log));
    native.function_calls.forEach((call, i) => {
      assert.equal(log[i].tool, call.name);
      for (const [k, v] of Object.entries(call.arguments)) assert.equal(String(log[i].args[k]), String(v), k);
    });
    assert.deepEqual(steps[0].results, native.function_calls.map((c) => ({ done: c.name })));
    assert.deepEqual(pageErrors, []);
  });
}

test('pageTools() asks confirm before each execution; a refusal is the call\'s result, nothing runs', async () => {
  const page = await browser.newPage();
  await page.goto(new URL('/t/house.html', server.url).href);
  await page.waitForFunction(() => document.body.dataset.ready);
  const out = await page.evaluate(async () => {
    const { pageTools } = await import('/pkg/webmcp.js');
    const asked = [];
    const tools = await pageTools(undefined, { confirm: (tool, args) => (asked.push([tool.name, args]), false) });
    const lights = tools.find((t) => t.name === 'control_lights');
    const result = await lights.fn({ room: 'kitchen', action: 'on' });
    return { asked, result, log: window.webmcpLog };
  });
  assert.deepEqual(out, { asked: [['control_lights', { room: 'kitchen', action: 'on' }]], result: { error: 'declined by the user' }, log: [] });
  await page.close();
});

test('without WebMCP pageTools() rejects with unsupported', async () => {
  const plain = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await plain.newPage();
    await page.goto(new URL('/t/house.html', server.url).href);
    const code = await page.evaluate(async () => {
      const { pageTools } = await import('/pkg/webmcp.js');
      return pageTools().then(() => 'resolved', (e) => e.code);
    });
    assert.equal(code, 'unsupported');
  } finally {
    await plain.close();
  }
});

test("the demo page registers its house's tools through WebMCP; executing one changes the house", async () => {
  const page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(server.url);
  await page.waitForFunction(() => document.getElementById('view-agent').dataset.webmcpTools, null, { timeout: 60_000 });
  const light = () => page.$eval('#house [data-room="kitchen"] [data-device="light"]', (e) => e.dataset.value);
  assert.equal(await light(), 'off');
  const out = await page.evaluate(async () => {
    const tools = await document.modelContext.getTools();
    const lights = tools.find((t) => t.name === 'control_lights');
    const result = JSON.parse(await document.modelContext.executeTool(lights, { room: 'kitchen', action: 'on' }));
    return { names: tools.map((t) => t.name).sort(), result };
  });
  assert.deepEqual(out.names, env('smart_home').tools.map((t) => t.name).sort());
  assert.deepEqual(out.result, { room: 'kitchen', on: true, brightness_percent: 100, color: 'warm white' });
  assert.equal(await light(), 'on');
  assert.deepEqual(pageErrors, []);
  await page.close();
});
