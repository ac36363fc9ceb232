// Where the engine's worker and its pool's threads start from (spawn.js): the package's own
// worker.js through the literal spawn bundlers rewrite, else the script `assetBase`/`workerUrl`
// name or the other origin's worker.js, with the pool's thread.js beside it (host/pool.js), as
// the engine's worker found it when it started its threads itself.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';

import { workerSpawner } from '../../pkg/spawn.js';

const here = () => 'literal';
const PKG = 'http://page.test/node_modules/needle-web/index.js';
globalThis.location = { href: 'http://page.test/app/', origin: 'http://page.test' };
after(() => delete globalThis.location);

test("the package's own worker: the literal spawn, and the pool's literal thread.js", () => {
  const spawn = workerSpawner({}, PKG, here);
  assert.equal(spawn('x'), 'literal');
  assert.equal(spawn.threadScript, undefined);
});

test('assetBase, workerUrl and another origin: thread.js beside the worker script', () => {
  const at = (options, pkg = PKG) => workerSpawner(options, pkg, here).threadScript?.href;
  assert.equal(at({ assetBase: 'https://cdn.test/needle-web' }), 'https://cdn.test/needle-web/thread.js');
  assert.equal(at({ assetBase: '/static/needle/' }), 'http://page.test/static/needle/thread.js');
  assert.equal(at({ workerUrl: 'https://cdn.test/v2/worker.js' }), 'https://cdn.test/v2/thread.js');
  assert.equal(at({}, 'https://cdn.test/npm/needle-web/index.js'), 'https://cdn.test/npm/needle-web/thread.js');
});
