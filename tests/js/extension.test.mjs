// needle-web/extension over a fake chrome.runtime (messages JSON-copied as a Port copies them):
// a page's connectEngine() is a Needle whose every surface (complete, stream, conversation, run
// with the page's functions, extract, chat.completions, tokenize, logits, abort, load progress)
// runs on the shared engine and answers as the engine's own Needle does; prepare() and
// loadSnapshot() (bytes or a URL) run on the engine's Needle, so a page's request reuses the
// prefix they brought in; pages share one load;
// a page's dispose leaves the engine to the others. The service-worker entry serves the same
// protocol with its engine's host imported statically (no import(), which service workers forbid).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Needle } from '../../pkg/index.js';
import { environments } from '../../pkg/environments.js';
import { cli, tempDir } from './helpers.mjs';
import { event, fakeChrome, portPair } from './fake-chrome.mjs';

const MODEL = new Uint8Array(readFileSync(new URL('../../pkg/models/default.cact', import.meta.url)));
const QUERY = 'Turn on the kitchen lights';
const { tools } = environments.smart_home;
let ext;
let loads = 0;
let engineNeedle = null;
const progress = [];

before(async () => {
  globalThis.chrome = fakeChrome();
  ext = await import('../../pkg/extension.js');
  ext.onEnsureEngine('engine.html'); // the service worker's part
  ext.serveEngine(
    ({ onProgress }) =>
      (engineNeedle ??= (loads++, Needle.load(MODEL, { onProgress, worker: false }))),
    { describe: () => ({ label: 'shared' }) },
  );
});

after(async () => (await engineNeedle)?.dispose());

test('a page gets the shared engine as a Needle: load progress, info, and one load for every page', async () => {
  const page = await ext.connectEngine({ onProgress: (p) => progress.push(p.phase) });
  const other = await ext.connectEngine();
  assert.deepEqual(chrome.documents.map((d) => [d.url, d.reasons]), [['engine.html', ['WORKERS']]]);
  assert.equal(loads, 1);
  assert.ok(progress.includes('init'), progress.join());
  const engine = await engineNeedle;
  assert.equal(page.info.label, 'shared');
  assert.equal(page.info.d_model, engine.info.d_model);
  assert.equal(page.info.sha256, engine.info.sha256);
  other.dispose();
  assert.ok(other.disposed && !page.disposed);
  const r = await page.complete(QUERY, { tools, maxTokens: 48 });
  assert.deepEqual(r.function_calls, (await engine.complete(QUERY, { tools, maxTokens: 48 })).function_calls);
  page.dispose();
});

test('streaming, conversation, run with the page\'s functions, extract and chat.completions run remotely', async () => {
  const page = await ext.connectEngine();
  const engine = await engineNeedle;
  try {
    const direct = await engine.complete(QUERY, { tools, maxTokens: 48 });
    const chunks = [];
    let final = null;
    for await (const item of page.stream(QUERY, { tools, maxTokens: 48 })) {
      if ('token' in item) chunks.push(item.text);
      else final = item;
    }
    assert.deepEqual(final.tokens, direct.tokens);
    assert.equal(chunks.length, direct.tokens.length);

    const convo = page.conversation({ tools });
    const first = await convo.send(QUERY, { maxTokens: 48 });
    assert.deepEqual(first.function_calls, direct.function_calls);
    assert.equal(convo.history.length >= 2, true);

    const called = [];
    const withFns = tools.map((t) => ({ ...t, fn: (args) => (called.push([t.name, args]), { ok: true }) }));
    const run = await page.run(QUERY, { tools: withFns, maxSteps: 2, maxTokens: 48 });
    assert.deepEqual(called[0], [direct.function_calls[0].name, direct.function_calls[0].arguments]);
    assert.ok(run.steps.length >= 1);

    const tool = tools.find((t) => t.name === direct.function_calls[0].name);
    assert.deepEqual(await page.extract(QUERY, tool), await engine.extract(QUERY, tool));

    const c = await page.chat.completions.create({ messages: [{ role: 'user', content: QUERY }], tools: tools.map((f) => ({ type: 'function', function: f })), max_tokens: 48 });
    assert.equal(c.choices[0].message.tool_calls[0].function.name, direct.function_calls[0].name);
  } finally {
    page.dispose();
  }
});

test('typed results cross as typed arrays; an abort stops the remote generation with its partial result', async () => {
  const page = await ext.connectEngine();
  const engine = await engineNeedle;
  try {
    const ids = await page.tokenize(QUERY);
    assert.ok(ids instanceof Uint32Array);
    assert.deepEqual(ids, await engine.tokenize(QUERY));
    assert.equal(await page.detokenize(ids), await engine.detokenize(ids));
    const logits = await page.logits(ids.slice(0, 2));
    assert.ok(logits instanceof Float32Array);
    assert.deepEqual(logits, await engine.logits(ids.slice(0, 2)));

    const stop = new AbortController();
    let tokens = 0;
    const e = await page
      .complete('Tell me a long story about the kitchen lights', {
        maxTokens: 400,
        temperature: 1,
        seed: 3,
        signal: stop.signal,
        onToken: () => ++tokens === 2 && stop.abort(),
      })
      .then(() => null, (err) => err);
    assert.deepEqual([e?.name, e?.code, e?.result?.stop_reason], ['AbortError', 'aborted', 'aborted']);
    assert.ok(tokens < 20, `stopped within a few tokens (${tokens})`);
  } finally {
    page.dispose();
  }
});

test("a page's prepare() and loadSnapshot() run on the engine's Needle: its requests reuse the prefix", async () => {
  const page = await ext.connectEngine();
  const engine = await engineNeedle;
  const preset = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
  const opts = { tools: preset.tools, system: preset.system, maxTokens: 24 };
  try {
    const fresh = await engine.complete(QUERY, opts); // prefills its prefix itself
    await engine.reset();

    // prepare(): prefilled in the engine (Node keeps no snapshots), then held; a request reuses it.
    const prepared = await page.prepare({ tools: preset.tools, system: preset.system });
    assert.equal(prepared.snapshot, 'prefilled');
    assert.ok(prepared.tokens > 0);
    assert.equal((await page.prepare({ tools: preset.tools, system: preset.system })).snapshot, 'held');
    const r = await page.complete(QUERY, opts);
    assert.equal(r.usage.cached_tokens, prepared.tokens);
    assert.deepEqual([r.tokens, r.confidence], [fresh.tokens, fresh.confidence]);
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(page.prepare({ tools }, { signal: stop.signal }), { code: 'aborted' });

    // loadSnapshot(): the native CLI's snapshot of that prefix, as bytes and as a URL.
    const model = fileURLToPath(new URL('../../pkg/models/default.cact', import.meta.url));
    const file = join(tempDir(), 'smart_home.snap');
    cli(['snapshot', '--model', model, '--preset', 'smart_home', '--out', file]);
    const bytes = new Uint8Array(readFileSync(file));
    const count = new DataView(bytes.buffer).getUint32(128, true);
    for (const source of [bytes, bytes.buffer, pathToFileURL(file).href]) {
      await engine.reset();
      assert.deepEqual(await page.loadSnapshot(source), { tokens: count });
      const loaded = await page.complete(QUERY, opts);
      assert.equal(loaded.usage.cached_tokens, count, 'the request runs on from the snapshot');
      assert.deepEqual([loaded.tokens, loaded.confidence], [fresh.tokens, fresh.confidence]);
    }
    await assert.rejects(page.loadSnapshot(bytes.subarray(0, 200)), { code: 'bad_snapshot' });
  } finally {
    page.dispose();
  }
});

test('the engine refuses dispose from a page; a page whose engine goes away fails with worker_died', async () => {
  const page = await ext.connectEngine();
  const { REQUEST, Req } = await import('../../pkg/protocol.js');
  const refused = await page[REQUEST](Req.DISPOSE, {}).then(() => null, (e) => e);
  assert.equal(refused?.code, 'invalid_argument');
  assert.ok(!(await engineNeedle).disposed);
  // The engine's end of the Port closes (its document or service worker went away).
  const pending = page.complete('Tell me a long story', { maxTokens: 400, temperature: 1, seed: 1 });
  chrome.engineEnds.at(-1).disconnect();
  const e = await pending.then(() => null, (err) => err);
  assert.equal(e?.code, 'worker_died');
  assert.ok(page.disposed);
  await assert.rejects(page.complete(QUERY), { code: 'worker_died' });
});

// A service worker may not call import(): in a child process, a module hook refuses host/index.js's
// one import() (of ../worker.js, the inline host); the service-worker entry must not need it.
const NO_IMPORT = `export async function resolve(specifier, context, next) {
  if (specifier === '../worker.js' && context.parentURL.endsWith('/pkg/host/index.js'))
    throw new Error('import() of the engine host: a service worker forbids it');
  return next(specifier, context);
}`;

test('the service-worker entry serves the same protocol, its engine host imported statically', () => {
  const child = `
    import { register } from 'node:module';
    import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(NO_IMPORT)}));
    const event = ${event.toString()};
    const portPair = ${portPair.toString()};
    const later = (f) => setImmediate(f);
    globalThis.chrome = (${fakeChrome.toString()})();
    const sw = await import(${JSON.stringify(new URL('../../pkg/extension-sw.js', import.meta.url).href)});
    const { connectEngine } = await import(${JSON.stringify(new URL('../../pkg/extension.js', import.meta.url).href)});
    const model = new Uint8Array(readFileSync(${JSON.stringify(new URL('../../pkg/models/default.cact', import.meta.url).pathname)}));
    let needle = null;
    sw.serveEngine(() => (needle ??= sw.Needle.load(model, { worker: false })));
    try {
      const page = await connectEngine();
      const r = await page.complete('Turn on the kitchen lights', { maxTokens: 8 });
      console.log(JSON.stringify({ thread: page.info.thread, tokens: r.tokens.length, documents: chrome.documents.length }));
      page.dispose();
    } catch (e) {
      console.log(JSON.stringify({ error: e.code + ': ' + e.message }));
    } finally {
      (await needle)?.dispose();
    }`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8', timeout: 120_000 });
  const lines = out.stdout.trim().split('\n');
  const got = JSON.parse(lines.at(-1) || '{}');
  assert.equal(got.error, undefined, out.stderr);
  assert.ok(got.tokens > 0, out.stdout + out.stderr);
  assert.equal(got.documents, 0, 'no offscreen document');
});
