#!/usr/bin/env node
// How long `Needle.load` takes in Node for each kind of source, and the process's peak RSS: one
// fresh process per (kind, run), kinds interleaved, medians. A measurement, not a test.
//
//   node tools/load-timing.mjs [--model www/models/default.cact] [--runs 5] [--simd false] [--worker false]
//
// Kinds: uint8array, buffer, arraybuffer, blob, file-url, cached-url (an http URL whose copy is
// already in a store: an in-memory one given as the `cache` option, as Node has no Cache Storage).
// `--worker false` runs the engine inline instead of in a worker thread.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const KINDS = ['uint8array', 'buffer', 'arraybuffer', 'blob', 'file-url', 'cached-url'];
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

/** A store holding entries in memory (the `cache` option's interface). */
function memoryStore() {
  const entries = new Map();
  return {
    get: async (url) => entries.get(url),
    put: async (url, entry) => void entries.set(url, entry),
    delete: async (url) => entries.delete(url),
    keys: async () => [...entries.keys()],
  };
}

async function child(kind, model, simd, worker) {
  const { Needle } = await import('../pkg/index.js');
  const options = {
    simd: simd === 'false' ? false : 'auto',
    worker: worker === 'false' ? false : 'auto',
  };
  let source;
  let server = null;
  if (kind === 'file-url') source = pathToFileURL(model);
  else if (kind === 'cached-url') {
    const { startServer } = await import('./serve.mjs');
    server = await startServer({ port: 0, model });
    source = `${server.url}models/default.cact`;
    options.cache = memoryStore();
    const { fetchModel } = await import('../pkg/storage/model.js');
    await fetchModel(source, { cache: options.cache }); // primes the store
  } else {
    const file = readFileSync(model); // a Buffer, often a view on a larger pool
    if (kind === 'buffer') source = file;
    else if (kind === 'uint8array') source = new Uint8Array(file);
    else if (kind === 'arraybuffer') source = new Uint8Array(file).buffer;
    else if (kind === 'blob') source = new Blob([file]);
  }
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const needle = await Needle.load(source, options);
  const ms = performance.now() - t0;
  const info = needle.info;
  needle.dispose();
  if (server) await server.close();
  const maxRss = process.resourceUsage().maxRSS * 1024;
  console.log(
    JSON.stringify({ kind, ms, rssBefore, maxRss, source: info.source, load_ms: info.load_ms }),
  );
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main() {
  const model = arg('model', fileURLToPath(new URL('../www/models/default.cact', import.meta.url)));
  const runs = Number(arg('runs', 5));
  const simd = arg('simd', 'auto');
  if (process.argv[2] === '--child')
    return child(process.argv[3], model, simd, arg('worker', 'auto'));
  const results = Object.fromEntries(KINDS.map((k) => [k, []]));
  for (let r = 0; r < runs; r++) {
    for (const kind of KINDS) {
      const out = execFileSync(
        process.execPath,
        [fileURLToPath(import.meta.url), '--child', kind, ...process.argv.slice(2)],
        {
          encoding: 'utf8',
        },
      );
      results[kind].push(JSON.parse(out.trim().split('\n').at(-1)));
    }
  }
  const mb = (n) => (n / 2 ** 20).toFixed(0);
  console.log(
    `model ${model} (${mb(statSync(model).size)} MiB), ${runs} runs, medians; Node ${process.version}, worker ${arg('worker', 'auto')}`,
  );
  console.log('kind          load ms   init ms   peak RSS MiB');
  for (const kind of KINDS) {
    const rs = results[kind];
    const ms = median(rs.map((r) => r.ms)).toFixed(0);
    const init = median(rs.map((r) => r.load_ms.init)).toFixed(0);
    console.log(
      `${kind.padEnd(12)} ${ms.padStart(8)} ${init.padStart(9)} ${mb(median(rs.map((r) => r.maxRss))).padStart(14)}`,
    );
  }
}

await main();
