// Where the engine runs. `worker` option: 'auto' (a module Web Worker in browsers, a
// worker_threads Worker in Node, inline elsewhere), true (a worker or an error), false (inline on
// the calling thread). Every host is `{ port, terminate(), worker }`: `port` speaks protocol.js
// with postMessage/onmessage; `worker` has onerror/onmessageerror, or is null inline.
import { NeedleError } from '../protocol.js';
import { localPorts } from './local.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
const nodeImport = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ name);
// Not a literal in `new URL(...)`: browser bundles must not emit the Node entry as an asset.
const NODE_WORKER = './node-worker.js';

function webWorker(spawn) {
  const worker = spawn();
  return { port: worker, terminate: () => worker.terminate(), worker };
}

async function nodeWorker() {
  const { Worker: NodeWorker } = await nodeImport('node:worker_threads');
  const { nodeWorkerHost } = await import('./node.js');
  // execArgv: [] — the engine needs none of the caller's flags, and some (`--input-type`, `-e`)
  // make a worker fail to start.
  return nodeWorkerHost(new NodeWorker(new URL(/* webpackIgnore: true */ NODE_WORKER, import.meta.url), { execArgv: [] }));
}

async function inline() {
  const { serve } = await import('../worker.js');
  const [client, host] = localPorts();
  serve(host);
  return { port: client, terminate: () => (client.close(), host.close()), worker: null };
}

/**
 * Starts a host. `spawnWebWorker()` creates the module Web Worker: it is written in index.js, at
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
