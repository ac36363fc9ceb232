// Issue 51, defects 4 and 5: `.`, `..` and empty segments in a model name's revision, file or
// Hub listing entry are refused before anything is fetched (they resolve out of the repository's
// `resolve/{revision}/` folder: `GET /good`, `/etc/x.cact`, `/secret.cact` on the same host);
// a snapshot the engine refuses in `loadSnapshot()` leaves the one given at load for its prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { SNAPSHOT_URL } from '../../pkg/storage/snapshots.js';
import { octets, routedServer, settle } from './raw-server.mjs';

const MODEL = new Uint8Array(readFileSync(new URL('../../pkg/models/default.cact', import.meta.url)));
const QUERY = 'Turn on the kitchen lights';

const server = routedServer();


test('., .. and empty segments in revisions, files and listing entries are invalid_argument, never fetched', async () => {
  server.routes['/api/models/o/evil/tree/main'] = () => {
    const body = new TextEncoder().encode(JSON.stringify([{ type: 'file', path: '../../../../secret.cact', size: 10 }]));
    return { body, headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } };
  };
  server.routes['/good'] = () => octets(MODEL);
  server.routes['/etc/x.cact'] = () => octets(MODEL);
  server.routes['/secret.cact'] = () => octets(MODEL);
  const named = (name, options) =>
    settle(Needle.load(name, { modelHost: server.url, worker: false, cache: 'none', ...options }));
  const cases = [
    ['o/good', { revision: '..', file: '../../../good' }],
    ['o/good', { file: '../../../../etc/x.cact' }],
    ['o/good', { revision: '.', file: 'm.cact' }],
    ['o/good', { revision: '', file: 'm.cact' }],
    ['o/good', { revision: 'a/../..', file: 'm.cact' }],
    ['o/good', { file: 'dir//m.cact' }],
    ['o/good', { file: './m.cact' }],
    ['o/good', { file: 'dir/' }],
    ['o/evil', {}],
  ];
  for (const [name, options] of cases) {
    const e = await named(name, options);
    assert.equal(e.code, 'invalid_argument', `${name} ${JSON.stringify(options)}: ${e.code} ${e.message}`);
  }
  assert.deepEqual(
    server.log.map((r) => r.path),
    ['/api/models/o/evil/tree/main'],
    'nothing but the listing was fetched',
  );
  for (const f of ['cached', 'evict']) {
    const e = await settle(Needle[f]('o/good', { modelHost: server.url, file: '../x.cact', cache: 'none' }));
    assert.equal(e.code, 'invalid_argument', f);
  }
});

test('a loadSnapshot() the engine refuses leaves the snapshot given at load for that prefix', async () => {
  const preset = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
  const opts = { tools: preset.tools, system: preset.system, maxTokens: 16 };
  // A snapshot of the prefix, made by the package itself (stored in the caller's store).
  const store = new Map();
  const custom = {
    get: async (u) => store.get(u),
    put: async (u, entry) => void store.set(u, entry),
    delete: async (u) => store.delete(u),
    keys: async () => [...store.keys()],
  };
  const maker = await Needle.load(MODEL, { worker: false, cache: custom });
  assert.equal((await maker.prepare({ tools: preset.tools, system: preset.system })).snapshot, 'saved');
  maker.dispose();
  const [good] = [...store].filter(([u]) => u.startsWith(SNAPSHOT_URL)).map(([, e]) => e.bytes);
  const bad = good.slice();
  bad[bad.length - 100] ^= 0xff; // same header (same prefix), a body its checksum refuses

  const warnings = [];
  const needle = await Needle.load(MODEL, {
    worker: false,
    cache: 'none',
    snapshots: [good],
    logger: { warn: (m) => warnings.push(m) },
  });
  try {
    const e = await settle(needle.loadSnapshot(bad));
    assert.equal(e.code, 'bad_snapshot', e.message);
    const r = await needle.complete(QUERY, opts);
    assert.equal(r.snapshot, 'loaded', 'the good snapshot given at load is the one used');
    assert.ok(r.usage.cached_tokens > 0);
    assert.deepEqual(warnings, []);
  } finally {
    needle.dispose();
  }
});
