// Shared by the JS tests: repository paths, the default model, the native CLI, a fake Cache Storage.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The model the demo embeds: $NEEDLE_MODEL (set by dev.sh), else www/models/default.cact as dev.sh
 * would pick, else the first v3 fixture (too small a context for the preset environments' tests). */
export function defaultModel() {
  if (process.env.NEEDLE_MODEL) {
    const f = resolve(ROOT, process.env.NEEDLE_MODEL);
    if (!existsSync(f)) throw new Error(`NEEDLE_MODEL=${process.env.NEEDLE_MODEL}: no such file`);
    return f;
  }
  const embedded = join(ROOT, 'www/models/default.cact');
  if (existsSync(embedded)) return embedded;
  const dir = join(ROOT, 'tests/fixtures/v3');
  const cases = existsSync(dir) ? readdirSync(dir).sort() : [];
  const preferred = cases.includes('default') ? ['default'] : cases;
  for (const c of preferred) {
    const f = join(dir, c, 'model.cact');
    if (existsSync(f)) return f;
  }
  throw new Error('no v3 fixture model under tests/fixtures/v3 (set NEEDLE_MODEL)');
}

/** The fixture's case.json beside a model file, or null. */
export function caseOf(model) {
  const file = join(dirname(model), 'case.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
}

export const CLI = resolve(ROOT, process.env.NEEDLE_CLI || 'target/release/needle');

/** Runs the native CLI and returns stdout. */
export function cli(args) {
  return execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}

export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'needle-js-'));
}

/** `needle run --json` for one request, parsed. */
export function nativeRun(model, query, toolsJson, extra = []) {
  const dir = tempDir();
  const tools = join(dir, 'tools.json');
  writeFileSync(tools, toolsJson);
  return JSON.parse(cli(['run', '--model', model, '--query', query, '--tools', tools, '--json', ...extra]));
}

/** `needle chat --json` over `lines` (one user turn each), parsed: one result per turn. */
export function nativeChat(model, lines, toolsJson, extra = []) {
  const tools = join(tempDir(), 'tools.json');
  writeFileSync(tools, toolsJson);
  const args = ['chat', '--model', model, '--tools', tools, '--json', ...extra];
  const out = execFileSync(CLI, args, { encoding: 'utf8', input: lines.join('\n') + '\n', maxBuffer: 1 << 28 });
  return out.trim().split('\n').map((l) => JSON.parse(l));
}

/** `needle logits` for a token sequence: a Float32Array, rows x vocab. */
export function nativeLogits(model, ids) {
  const out = join(tempDir(), 'logits.bin');
  cli(['logits', '--model', model, '--tokens', ids.join(','), '--out', out]);
  const buf = readFileSync(out);
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

/**
 * Asserts a package result says what `needle run --json` said. `exact`: the confidence too, bit
 * for bit (the baseline build); the SIMD build sums in another order.
 */
export function assertSameAsNative(r, native, exact) {
  assert.deepEqual(r.tokens, native.tokens, 'tokens');
  assert.equal(r.text, native.text);
  assert.deepEqual(r.function_calls, native.function_calls);
  assert.equal(r.reasoning, native.reasoning ?? null);
  assert.equal(r.parse_error, native.parse_error ?? null);
  assert.equal(r.type, native.type);
  assert.equal(r.stop_reason, native.stop_reason);
  // `usage.cached_tokens` depends on what the engine ran before; the CLI always starts fresh.
  assert.equal(r.usage.prompt_tokens, native.usage.prompt_tokens);
  assert.equal(r.usage.completion_tokens, native.usage.completion_tokens);
  assert.deepEqual(r.validation, native.validation);
  if (native.confidence === null) assert.equal(r.confidence, null);
  else if (exact) assert.equal(r.confidence, native.confidence);
  else assert.ok(Math.abs(r.confidence - native.confidence) < 1e-4, `confidence ${r.confidence} vs ${native.confidence}`);
}

export const SMART_HOME_TOOLS = JSON.stringify([
  {
    type: 'function',
    function: {
      name: 'set_light',
      description: 'Turn a light on or off.',
      parameters: { type: 'object', properties: { room: { type: 'string' }, on: { type: 'boolean' } }, required: ['room'] },
    },
  },
]);

/** An in-memory Cache Storage with the subset of the API cache.js uses (Node has none). */
export class FakeCaches {
  stores = new Map();
  async open(name) {
    if (!this.stores.has(name)) this.stores.set(name, new FakeCache());
    return this.stores.get(name);
  }
}

class FakeCache {
  entries = new Map(); // url -> { body: Uint8Array, headers: [[k, v]] }
  async match(req) {
    const e = this.entries.get(typeof req === 'string' ? req : req.url);
    return e ? new Response(e.body.slice(), { headers: e.headers }) : undefined;
  }
  async put(req, response) {
    const url = typeof req === 'string' ? req : req.url;
    this.entries.set(url, { body: new Uint8Array(await response.arrayBuffer()), headers: [...response.headers] });
  }
  async delete(req) {
    return this.entries.delete(typeof req === 'string' ? req : req.url);
  }
  async keys() {
    return [...this.entries.keys()].map((url) => new Request(url));
  }
}
