// Where the engine runs. `worker` option: 'auto' (a module Web Worker in browsers, a
// worker_threads Worker in Node, inline elsewhere), true (a worker or an error), false (inline on
// the calling thread). Every host is `{ port, terminate(), worker }`: `port` speaks protocol.js
// with postMessage/onmessage; `worker` is null inline. A worker host has `onDeath(cb)`: cb(why)
// when the worker is gone or unusable. The inline host has `lend(bytes)` (worker.js serve).
import { NeedleError, Reply } from '../protocol.js';
import { localPorts } from './local.js';
import { servePoolThreads } from './pool.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
const nodeImport = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ name);
// Not a literal in `new URL(...)`: browser bundles must not emit the Node entry as an asset.
const NODE_WORKER = './node-worker.js';

function webWorker(spawn) {
  const name = `needle-web ${uniqueId()}`;
  const worker = spawn(name);
  const endThreads = servePoolThreads(worker, spawn.threadScript);
  return {
    port: worker,
    terminate: () => (endThreads(), worker.terminate()),
    worker,
    onDeath: (cb) => watchWebWorker(worker, name, cb),
  };
}

/**
 * Calls `onDead(why)` when a Web Worker is gone or unusable: an uncaught error (also a script that
 * fails to load), a message that cannot be decoded, or, where Web Locks exist, its end for any
 * reason (terminated, crashed, out of memory), which no event reports: the worker holds a lock
 * named after itself for its whole life (and says `alive` once it does), so our request for the
 * same lock is granted only when it is gone.
 */
function watchWebWorker(worker, name, onDead) {
  worker.addEventListener('error', (e) => {
    if (typeof e.preventDefault === 'function') e.preventDefault();
    onDead(`uncaught error: ${e.message || 'the worker script failed'}`);
  });
  worker.addEventListener('messageerror', () => onDead('a message could not be decoded'));
  const locks = globalThis.navigator && navigator.locks;
  if (!locks) return;
  const alive = (e) => {
    if (!e.data || e.data.type !== Reply.ALIVE) return;
    worker.removeEventListener('message', alive);
    locks.request(name, () => onDead('it ended'));
  };
  worker.addEventListener('message', alive);
}

function uniqueId() {
  const c = globalThis.crypto;
  return c && typeof c.randomUUID === 'function'
    ? c.randomUUID()
    : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

async function nodeWorker() {
  const { Worker: NodeWorker } = await nodeImport('node:worker_threads');
  const { nodeWorkerHost } = await import('./node.js');
  // execArgv: [] — the engine needs none of the caller's flags, and some (`--input-type`, `-e`)
  // make a worker fail to start.
  return nodeWorkerHost(
    new NodeWorker(new URL(/* webpackIgnore: true */ NODE_WORKER, import.meta.url), {
      execArgv: [],
    }),
  );
}

// The engine host's serve(), where a static import provided it: a service worker may not import().
let inlineServe = null;

/** Makes inline hosts use `serve` (worker.js) instead of importing it (extension-sw.js). */
export function provideInlineServe(serve) {
  inlineServe = serve;
}

async function inline() {
  const { serve } = inlineServe ? { serve: inlineServe } : await import('../worker.js');
  const [client, host] = localPorts();
  const { lend } = serve(host);
  return { port: client, terminate: () => (client.close(), host.close()), worker: null, lend };
}

/**
 * Starts a host. `spawnWebWorker(name)` creates the module Web Worker: it is written in index.js, at
 * the package root, because bundlers that do not rewrite `new URL(..., import.meta.url)` (esbuild,
 * Rollup) leave it relative to the bundle, beside which their recipe copies the package root.
 */
export async function startHost(mode = 'auto', spawnWebWorker) {
  if (mode === false) return inline();
  if (typeof Worker === 'function') return webWorker(spawnWebWorker);
  if (isNode) return nodeWorker();
  if (mode === true) throw new NeedleError('unsupported', 'no Worker is available here');
  return inline();
}
