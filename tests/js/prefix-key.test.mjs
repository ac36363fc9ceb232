// The key check of a stored prefix snapshot (pkg/engine/prefix.js `bringIn`): a snapshot found
// under a prefix's key but made of another prefix (a store that mixed its entries up, or one
// written by someone else) is refused before the engine sees it. The engine alone would take it:
// same model and options, so its header checks pass; it cannot know which prefix was meant, and
// would hold another prefix's state as this one's snapshot, reported `loaded`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { Needle } from '../../pkg/index.js';
import { bringIn } from '../../pkg/engine/prefix.js';
import { memoryStore, snapshotsIn } from './memory-store.mjs';
import { defaultModel } from './helpers.mjs';

const BYTES = readFileSync(defaultModel());
const ENV = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
const OPTS = { tools: ENV.tools, system: ENV.system, maxTokens: 24 };
const QUERY = 'Turn off the kitchen lights';


test('a stored snapshot of another prefix is refused snapshot_mismatch and the prefix prefilled', async () => {
  const load = (options) => Needle.load(new Uint8Array(BYTES), options);
  // This prefix's snapshot, and another system prompt's over the same tools and model.
  const store = memoryStore();
  const other = memoryStore();
  for (const [into, opts] of [
    [store, OPTS],
    [other, { ...OPTS, system: 'You control a small flat. Be brief.' }],
  ]) {
    const n = await load({ cache: into });
    await n.prepare(opts);
    n.dispose();
  }
  const [[url, own]] = snapshotsIn(store);
  const [[otherUrl, foreign]] = snapshotsIn(other);
  assert.notEqual(otherUrl, url, 'another prefix has another key');
  store.entries.set(url, { ...foreign, bytes: foreign.bytes.slice() });

  const fresh = await load({ snapshots: false });
  const want = await fresh.complete(QUERY, OPTS);
  fresh.dispose();
  const warnings = [];
  const n = await load({ cache: store, logger: { warn: (m) => warnings.push(m) } });
  const r = await n.complete(QUERY, OPTS);
  n.dispose();
  assert.equal(warnings.length, 1, `${warnings}`);
  assert.match(warnings[0], /not used \(snapshot_mismatch: it is the snapshot of another prefix\)/);
  assert.equal(r.snapshot, 'saved', 'prefilled and stored again');
  assert.deepEqual(r.tokens, want.tokens);
  assert.equal(r.confidence, want.confidence);
  assert.ok(Buffer.from(store.entries.get(url).bytes).equals(Buffer.from(own.bytes)), 'its own again');
});

test('the engine is not asked to load a snapshot whose key is not the prefix key', async () => {
  const header = new Uint8Array(136);
  header.set([0x4e, 0x44, 0x4c, 0x53, 0x4e, 0x41, 0x50, 0]); // "NDLSNAP\0"
  const calls = [];
  const session = {
    load_snapshot: () => calls.push('load_snapshot') && 7,
    begin_snapshot: () => (calls.push('begin_snapshot'), new Uint32Array([5, 6, 7])),
    snapshot_step: () => true,
    seal_snapshot: () => new Uint8Array([1]),
    reset: () => calls.push('reset'),
  };
  const posts = [];
  const prefix = { tools: '[]', system: 'S', key: 'the key of this prefix' };
  const r = await bringIn(
    session,
    prefix,
    { snapshot: header, keep: false },
    { post: (m) => posts.push(m), aborted: () => false },
  );
  assert.deepEqual(calls, ['begin_snapshot'], 'prefilled without a load');
  assert.equal(r.snapshot, 'prefilled');
  assert.equal(posts.length, 1);
  assert.match(posts[0].message, /snapshot_mismatch/);
});
