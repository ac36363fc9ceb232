// needle-web in a web developer's setup: the app in app/ built by Vite 8, 7 and 6 (build and dev
// server), webpack 5, esbuild and Rollup with the recipes in recipes.mjs, and as a plain
// <script type="module"> page with an import map. Each output is served (tools/serve.mjs, COOP/COEP)
// and run in Debian's Chromium; its answer must equal the native CLI's. A build of the app that
// loads a model from a URL must not carry the default model. Writes the table of bytes shipped to
// target/bundlers/report.json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../tools/serve.mjs';
import { ROOT, assertSameAsNative, cli } from '../js/helpers.mjs';
import { VITES, recipes, viteDev } from './recipes.mjs';

const WORK = join(ROOT, 'target/bundlers');
const PKG = join(ROOT, 'pkg');
const MODEL = join(PKG, 'models/default.cact');
const QUERY = 'Turn on the kitchen lights';
const report = {};

/** Installs pkg/ into WORK/node_modules the way npm would: only the files `files` lists. */
function installPackage() {
  const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  const dest = join(WORK, 'node_modules/needle-web');
  rmSync(dest, { recursive: true, force: true });
  for (const f of ['package.json', ...manifest.files]) {
    assert.ok(existsSync(join(PKG, f)), `pkg/${f} is missing: run ./build.sh`);
    cpSync(join(PKG, f), join(dest, f), { recursive: true });
  }
}

/** Two apps beside the installed package: `default` loads the default model, `url` a URL. */
function writeApps() {
  const src = join(ROOT, 'tests/bundlers/app');
  for (const [name, entry] of [['default', 'main.js'], ['url', 'url.js']]) {
    const dir = join(WORK, `app-${name}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const f of ['index.html', 'ask.js']) cpSync(join(src, f), join(dir, f));
    cpSync(join(src, entry), join(dir, 'main.js'));
  }
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}
const bytesOf = (dir) => walk(dir).reduce((n, f) => n + statSync(f).size, 0);
const hasModel = (dir) => walk(dir).some((f) => f.endsWith('.cact'));

let browser;
let native;

before(async () => {
  installPackage();
  writeApps();
  native = JSON.parse(cli(['run', '--preset', 'smart_home', '--query', QUERY, '--max-tokens', '256', '--json']));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
});

after(async () => {
  if (browser) await browser.close();
  writeFileSync(join(WORK, 'report.json'), JSON.stringify(report, null, 1));
  console.log('bundler | build | page | build run | bytes with the default model | bytes without');
  for (const [name, r] of Object.entries(report)) {
    console.log(`${name} | ${r.build ?? '-'} | ${r.page ?? '-'} | ${r.variant ?? '-'} | ${r.bytes ?? '-'} | ${r.bytesWithoutModel ?? '-'}`);
  }
});

/** Opens `url` in a fresh context and returns the page's outcome ({result, thread, variant} or {error}). */
async function runPage(url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  try {
    await page.goto(`${url}?q=${encodeURIComponent(QUERY)}`);
    await page.waitForFunction(() => document.body && document.body.dataset.outcome, null, { timeout: 60_000 }).catch(() => {});
    const outcome = await page.evaluate(() => document.body.dataset.outcome);
    assert.ok(outcome, `the page never answered; errors: ${errors.join(' | ') || 'none'}`);
    return JSON.parse(outcome);
  } finally {
    await context.close();
  }
}

function assertAnswered(outcome, row) {
  assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
  assert.equal(outcome.thread, 'worker', 'the engine runs in a Web Worker');
  // The bundled thread workers start: an isolated page with 2+ cores runs the threaded build.
  const want = outcome.isolated && outcome.cores >= 2 ? 'threaded' : 'simd';
  assert.equal(outcome.variant, want, `isolated ${outcome.isolated}, ${outcome.cores} cores`);
  row.variant = `${outcome.variant} x${outcome.threads}`;
  assertSameAsNative(outcome.result, native, false);
}

/** Serves `dir` (tools/serve.mjs: COOP/COEP, wasm MIME) and runs the page there. */
async function serveAndRun(dir) {
  const server = await startServer({ port: 0, root: dir });
  try {
    return await runPage(server.url);
  } finally {
    await server.close();
  }
}

for (const name of Object.keys(recipes)) {
  test(`${name}: the build answers like the CLI, and leaves the default model out when unused`, async () => {
    const row = (report[name] = { build: 'fail' });
    const out = join(WORK, `out/${name}`);
    await recipes[name](join(WORK, 'app-default'), out, { model: true });
    assert.ok(hasModel(out), 'the default model is in the build that loads it');
    row.bytes = bytesOf(out);
    const outUrl = join(WORK, `out/${name}-url`);
    await recipes[name](join(WORK, 'app-url'), outUrl, { model: false });
    assert.ok(!hasModel(outUrl), 'a build that never loads the default model does not carry it');
    row.bytesWithoutModel = bytesOf(outUrl);
    row.build = 'ok';
    row.page = 'fail';
    assertAnswered(await serveAndRun(out), row);
    // The URL app runs too, with the model put where it asks for it.
    cpSync(MODEL, join(outUrl, 'model.cact'));
    const fromUrl = await serveAndRun(outUrl);
    assert.equal(fromUrl.error, undefined, JSON.stringify(fromUrl.error));
    row.page = 'ok';
  });
}

for (const [name, module] of Object.entries(VITES)) {
  test(`${name} dev server: the app answers like the CLI`, async () => {
    const row = (report[`${name} dev`] = { build: 'n/a', page: 'fail' });
    const server = await viteDev(join(WORK, 'app-default'), module);
    try {
      assertAnswered(await runPage(server.url), row);
      row.page = 'ok';
    } finally {
      await server.close();
    }
  });
}

test('no bundler: <script type="module"> with an import map', async () => {
  const row = (report['script tag'] = { build: 'n/a', page: 'fail' });
  const dir = join(WORK, 'out/script');
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(WORK, 'app-default'), dir, { recursive: true });
  cpSync(join(WORK, 'node_modules'), join(dir, 'node_modules'), { recursive: true });
  const imports = {
    'needle-web': './node_modules/needle-web/index.js',
    'needle-web/default-model': './node_modules/needle-web/default-model.js',
    'needle-web/environments': './node_modules/needle-web/environments.js',
  };
  const html = readFileSync(join(dir, 'index.html'), 'utf8').replace(
    '<script type="module"',
    `<script type="importmap">${JSON.stringify({ imports })}</script>\n<script type="module"`,
  );
  writeFileSync(join(dir, 'index.html'), html);
  row.bytes = bytesOf(join(dir, 'node_modules/needle-web')) + statSync(join(dir, 'main.js')).size;
  assertAnswered(await serveAndRun(dir), row);
  row.page = 'ok';
});
