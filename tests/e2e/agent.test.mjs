// The demo's Agent and Conversation tabs in Chromium (Playwright, Debian's /usr/bin/chromium):
// needle.run() executing the smart-home calls the native CLI answers on a visible house, a refusal
// shown as "no tool fits", and a conversation whose turns are the CLI's. Leaves a screenshot of
// the agent mode in target/e2e/agent.png (and at $AGENT_SCREENSHOT when set).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { ROOT, defaultModel, nativeChat, nativeRun } from '../js/helpers.mjs';

const MODEL = defaultModel();
const OUT = join(ROOT, 'target/e2e');
const ENV = JSON.parse(readFileSync(join(ROOT, 'www/presets/smart_home.json'), 'utf8'));
const TOOLS = JSON.stringify(ENV.tools);

let server;
let context;
let page;
let profile;
const pageErrors = [];

/** What the CLI answers for `query` on the smart-home environment, as the agent mode asks it. */
const native = (query) => nativeRun(MODEL, query, TOOLS, ['--system', ENV.system, '--constrained']);

const viewState = (id) => page.evaluate((id) => document.getElementById(id).dataset.state, id);
const waitView = (id, ...states) =>
  page.waitForFunction(({ id, states }) => states.includes(document.getElementById(id).dataset.state), { id, states }, { timeout: 120_000 });

/** The calls shown in a log element: [{name, arguments}] from the call cards. */
const shownCalls = (selector) =>
  page.$$eval(`${selector} .call`, (cards) => cards.map((c) => ({ name: c.querySelector('h3').textContent, arguments: JSON.parse(c.querySelector('pre').textContent) })));

const device = (room, kind) =>
  page.$eval(room ? `#house [data-room="${room}"] [data-device="${kind}"]` : `#house [data-device="${kind}"]`, (e) => e.dataset.value);

async function runAgent(query) {
  await page.fill('#agent-input', query);
  await page.click('#agent-run');
  await waitView('view-agent', 'done', 'error', 'aborted');
  assert.equal(await viewState('view-agent'), 'done', await page.textContent('#agent-status'));
}

before(async () => {
  mkdirSync(OUT, { recursive: true });
  server = await startServer({ port: 0, model: MODEL });
  profile = mkdtempSync(join(tmpdir(), 'needle-e2e-agent-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
    viewport: { width: 1280, height: 900 },
  });
  page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(server.url);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 120_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
});

after(async () => {
  if (context) await context.close();
  if (server) await server.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the agent mode executes the calls the native CLI makes on the house, and shows each result', async () => {
  await page.click('#tab-agent');
  assert.equal(await page.isVisible('#house'), true);
  assert.equal(await device('living_room', 'blinds'), 'open');
  assert.equal(await device('study', 'fan'), 'off');

  const query = 'Close the living room blinds and turn on the study fan';
  const cli = native(query);
  assert.deepEqual(cli.function_calls.map((c) => c.name), ['control_blinds', 'control_fan']);
  await runAgent(query);
  const run = '#agent-log .log-run:first-child';
  const calls = await shownCalls(`${run} .turn.assistant:nth-child(2)`);
  assert.deepEqual(calls, cli.function_calls, 'the first step is the CLI answer');
  assert.equal(await device('living_room', 'blinds'), 'closed');
  assert.equal(await device('study', 'fan'), 'on');
  const results = await page.$$eval(`${run} .turn.tool:nth-child(3) .result`, (cards) => cards.map((c) => c.className));
  assert.deepEqual(results, ['result ok', 'result ok']);
  // One step (the page's default): the reply to the results is shown, any calls in it not run.
  const roles = await page.$$eval(`${run} > li`, (lis) => lis.map((li) => li.dataset.role));
  assert.deepEqual(roles, ['user', 'assistant', 'tool', 'assistant']);
  assert.match(await page.textContent(`${run} > li:nth-child(4)`), /Done: no further calls|Not run: the step limit was reached/);
  assert.match(await page.textContent('#agent-status'), /^Done: 2 calls run in 1 step/);

  const lights = 'Dim the bedroom lights to 30 percent';
  const dim = native(lights).function_calls;
  assert.deepEqual(dim, [{ name: 'control_lights', arguments: { room: 'bedroom', action: 'dim', brightness_percent: 30 } }]);
  await runAgent(lights);
  assert.equal(await device('bedroom', 'light'), 'on');
  assert.match(await page.textContent('#house [data-room="bedroom"] [data-device="light"]'), /30%/);
  await page.screenshot({ path: join(OUT, 'agent.png'), fullPage: true });
  if (process.env.AGENT_SCREENSHOT) await page.locator('#run-panel').screenshot({ path: process.env.AGENT_SCREENSHOT });
  assert.deepEqual(pageErrors, []);
});

test('a refusal reads "No tool fits this request", never raw tool-call markup, and changes nothing', async () => {
  const query = 'Play some jazz';
  assert.deepEqual(native(query).function_calls, []);
  const before = await page.$eval('#house', (h) => h.innerHTML);
  await runAgent(query);
  const run = await page.textContent('#agent-log .log-run:first-child');
  assert.match(run, /No tool fits this request/);
  assert.doesNotMatch(run, /tool_call/);
  assert.equal(await page.$eval('#house', (h) => h.innerHTML.replace(/ flash/g, '')), before.replace(/ flash/g, ''));
});

test('the conversation view keeps turns: each answer is the one `needle chat` gives for the same turns', async () => {
  await page.click('#tab-convo');
  await page.uncheck('#convo-date'); // the CLI's prompt has no date fact
  const tools = await page.inputValue('#tools');
  const system = await page.inputValue('#system');
  const turns = ['Turn on the kitchen lights', 'Close the bedroom blinds'];
  for (const text of turns) {
    await page.fill('#convo-input', text);
    await page.click('#convo-send');
    await waitView('view-convo', 'done', 'error');
    assert.equal(await viewState('view-convo'), 'done', await page.textContent('#convo-status'));
  }
  const roles = await page.$$eval('#convo-log > li', (lis) => lis.map((li) => li.dataset.role));
  assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant']);
  const shown = [];
  for (const i of [2, 4]) shown.push(await shownCalls(`#convo-log > li:nth-child(${i})`));
  const chat = nativeChat(MODEL, turns, tools, system ? ['--system', system] : []);
  assert.deepEqual(shown, chat.map((r) => r.function_calls));
  const first = chat[0];
  const status = await page.textContent('#convo-status');
  const prompt = Number(/(\d+) prompt tokens/.exec(status)[1]);
  assert.ok(prompt > first.usage.prompt_tokens + first.usage.completion_tokens, `the second prompt holds the first turn (${status})`);
  await page.locator('#run-panel').screenshot({ path: join(OUT, 'conversation.png') });
  await page.click('#convo-reset');
  assert.equal(await page.$$eval('#convo-log > li', (lis) => lis.length), 0);
  assert.deepEqual(pageErrors, []);
});
