// The side-by-side benchmark (`./dev.sh bench` builds what it needs, then runs this):
// needle-web native, its wasm builds in Node and in headless Chromium, and the published peer
// runtime (bench/peer) native and as wasm, on one container, runs interleaved (variant A run 1,
// B run 1, ..., A run 2, ...), medians printed as one Markdown table plus ratios to the peer.
//
//   node tools/bench/run.mjs --model bench/needle3-shipped-w4.cact [--runs 5] [--quick]
//        [--only name,name] [--kv int8|f32] [--numerics exact|deploy|both] [--threads 1,2,4,8,16]
//        [--out bench/out]
//
// `--numerics both` runs each of our variants twice per round, exact then deploy (`NAME-deploy`).
// `--threads` runs each threaded variant once per pool size (`NAME-tN`; natively through
// RAYON_NUM_THREADS, in Chromium as the pool's worker count), so a machine's scaling reads off
// one table; without it a threaded variant uses one thread per core.
//
// A variant whose build is missing is skipped (listed under the table); one that fails in a run
// is reported with its error and the others go on. Raw records: OUT/results.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workload } from './workload.mjs';
import { parseRecords, summarize, table } from './report.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const at = (p) => resolve(ROOT, p);

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const quick = args.includes('--quick');
const runs = Number(opt('--runs', quick ? 1 : 5));
const kv = opt('--kv', 'int8');
const numerics = opt('--numerics', 'exact');
const model = resolve(opt('--model', at('bench/needle3-shipped-w4.cact')));
const out = resolve(opt('--out', at('bench/out')));
const only = opt('--only', '').split(',').filter(Boolean);
const threadCounts = opt('--threads', '').split(',').filter(Boolean).map(Number);
if (threadCounts.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`--threads takes positive whole numbers, not ${opt('--threads')}`);
mkdirSync(out, { recursive: true });

const CLI = at('target/release/needle');
// The CLI with the `threads` feature (rayon over every core), built in its own target dir.
const CLI_THREADS = at('target/native-threads/release/needle');
// The CLI with the `gpu` feature (wgpu: Vulkan, Metal, DX12), built in its own target dir.
const CLI_GPU = at('target/gpu/release/needle');
const PEER = at('bench/peer/target/release/needle-bench-peer');
const PEER_WASM = at('bench/peer/target/wasi-simd/wasm32-wasip1/release/needle-bench-peer.wasm');
const wasmBuild = (v) => at(`pkg/wasm/${v}/needle.js`);

const requestsFile = resolve(out, 'requests.json');
const planFile = resolve(out, 'peer-plan.txt');
const requests = workload({ quick });
writeFileSync(requestsFile, JSON.stringify(requests));

/** Every variant: its column name, how to run one measurement, and what it needs to exist. */
const node = (script, variant) => [
  'node',
  [
    at(`tools/bench/${script}`),
    '--variant',
    variant,
    '--model',
    model,
    '--requests',
    requestsFile,
    '--kv',
    kv,
  ],
];
const VARIANTS = [
  {
    name: 'native',
    side: 'ours',
    env: 'native',
    needs: CLI,
    cmd: [CLI, ['bench', '--model', model, '--requests', requestsFile, '--kv', kv]],
  },
  {
    name: 'native-threaded',
    side: 'ours',
    env: 'native',
    needs: CLI_THREADS,
    cmd: [CLI_THREADS, ['bench', '--model', model, '--requests', requestsFile, '--kv', kv]],
    pool: (v, n) => ({ ...v, vars: { RAYON_NUM_THREADS: String(n) } }),
  },
  {
    name: 'native-gpu',
    side: 'ours',
    env: 'native',
    needs: CLI_GPU,
    cmd: [
      CLI_GPU,
      ['bench', '--model', model, '--requests', requestsFile, '--kv', kv, '--backend', 'gpu'],
    ],
  },
  {
    name: 'node-simd',
    side: 'ours',
    env: 'wasm',
    needs: wasmBuild('simd'),
    cmd: node('node.mjs', 'simd'),
  },
  {
    name: 'node-baseline',
    side: 'ours',
    env: 'wasm',
    needs: wasmBuild('baseline'),
    cmd: node('node.mjs', 'baseline'),
  },
  {
    name: 'chromium-simd',
    side: 'ours',
    env: 'wasm',
    needs: wasmBuild('simd'),
    cmd: node('chromium.mjs', 'simd'),
  },
  {
    name: 'chromium-threaded',
    side: 'ours',
    env: 'wasm',
    needs: wasmBuild('threaded'),
    cmd: node('chromium.mjs', 'threaded'),
    pool: (v, n) => ({ ...v, cmd: [v.cmd[0], [...v.cmd[1], '--threads', String(n)]] }),
  },
  {
    name: 'peer-native',
    side: 'peer',
    env: 'native',
    needs: PEER,
    cmd: [PEER, ['--model', model, '--plan', planFile, '--kv', kv]],
  },
  {
    name: 'peer-wasm',
    side: 'peer',
    env: 'wasm',
    needs: PEER_WASM,
    // Node 20.20's concurrent marker aborts ("unreachable code" in ProcessEphemerons) when this
    // module grows its memory past the container; the peer's loop allocates no JS objects.
    cmd: [
      'node',
      [
        '--no-warnings',
        '--single-threaded-gc',
        at('tools/bench/peer-wasi.mjs'),
        PEER_WASM,
        '--model',
        model,
        '--plan',
        planFile,
        '--kv',
        kv,
      ],
    ],
  },
];

/** An `ours` variant with deploy numerics. */
const deploy = (v) => ({
  ...v,
  name: `${v.name}-deploy`,
  cmd: [v.cmd[0], [...v.cmd[1], '--numerics', 'deploy']],
});
const NUMERICS = {
  exact: (v) => [v],
  deploy: (v) => [v.side === 'ours' ? deploy(v) : v],
  both: (v) => (v.side === 'ours' ? [v, deploy(v)] : [v]),
};
if (!NUMERICS[numerics])
  throw new Error(`--numerics must be exact, deploy or both, not ${numerics}`);

/** A threaded variant once per `--threads` count (`NAME-tN`), any other as it is. */
const pools = (v) =>
  v.pool && threadCounts.length
    ? threadCounts.map((n) => ({ ...v.pool(v, n), name: `${v.name}-t${n}` }))
    : [v];

const skipped = [];
const variants = VARIANTS.flatMap(pools)
  .flatMap((v) => NUMERICS[numerics](v))
  .filter((v) => {
    if (only.length && !only.includes(v.name.replace(/(-t\d+)?(-deploy)?$/, ''))) return false;
    if (!existsSync(v.needs)) skipped.push(`${v.name} (no ${v.needs.slice(ROOT.length + 1)})`);
    return existsSync(v.needs);
  });
if (!existsSync(model)) throw new Error(`no container at ${model}`);
if (!existsSync(CLI))
  throw new Error(
    `the prompt ids come from ${CLI}: build it first (cargo build --release --features cli)`,
  );

// The peer runs the very ids our engine renders and tokenizes.
const ids = run(CLI, ['bench', '--model', model, '--requests', requestsFile, '--ids']);
if (ids.error) throw new Error(`needle bench --ids: ${ids.error}`);
writeFileSync(
  planFile,
  ids.records
    .map(
      (r) => `${r.name} ${requests.find((q) => q.name === r.name).max_tokens} ${r.ids.join(',')}\n`,
    )
    .join(''),
);
const promptTokens = Object.fromEntries(ids.records.map((r) => [r.name, r.ids.length]));

const t0 = Date.now();
const results = Object.fromEntries(variants.map((v) => [v.name, { ...v, runs: [], errors: [] }]));
for (let i = 1; i <= runs; i++) {
  for (const v of variants) {
    const r = run(...v.cmd, v.vars);
    if (r.error) results[v.name].errors.push(r.error);
    else results[v.name].runs.push(r.records);
    process.stderr.write(
      `run ${i}/${runs} ${v.name}: ${r.error ? `FAILED ${r.error.split('\n')[0]}` : `${(r.ms / 1e3).toFixed(1)} s`}\n`,
    );
  }
}
const wall = (Date.now() - t0) / 1e3;

const summary = summarize(Object.values(results));
const cpu = cpus()[0]?.model ?? 'unknown CPU';
const header = [
  `${cpu}, ${cpus().length} cores; ${model.slice(model.lastIndexOf('/') + 1)}; KV ${kv}; numerics ${numerics}; ` +
    `medians of ${runs} interleaved runs (${wall.toFixed(0)} s)`,
  `prompts: short ${promptTokens.short} tokens + ${requests[0].max_tokens} generated, ` +
    `long ${promptTokens.long} + ${requests[1].max_tokens}, repeat ${promptTokens.repeat} (same system + tools as long)`,
];
const text = [
  ...header.map((l) => `${l}\n`),
  '',
  table(summary),
  skipped.length ? `\nskipped: ${skipped.join('; ')}\n` : '',
].join('\n');
for (const r of Object.values(results))
  for (const e of r.errors) process.stderr.write(`${r.name} failed: ${e}\n`);
writeFileSync(
  resolve(out, 'results.json'),
  JSON.stringify({ header, promptTokens, requests, results, summary }, null, 1),
);
writeFileSync(resolve(out, 'table.md'), text);
process.stdout.write(text);

/** Runs one measurement; its stdout is JSON records, one per line. */
function run(cmd, argv, vars = {}) {
  const start = Date.now();
  const env = { ...process.env, ...vars };
  const p = spawnSync(cmd, argv, { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Date.now() - start;
  if (p.error) return { error: String(p.error), ms };
  if (p.status !== 0)
    return { error: `exit ${p.status}: ${(p.stderr || '').trim().slice(-2000)}`, ms };
  try {
    return { records: parseRecords(p.stdout), ms };
  } catch (e) {
    return { error: `unreadable output (${e.message}): ${p.stdout.slice(0, 500)}`, ms };
  }
}
