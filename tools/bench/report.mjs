// The benchmark's arithmetic and its table: records (one JSON object per line, as `needle
// bench`, harness.mjs and bench/peer print them) -> per-variant medians -> Markdown.

/** A measurement's stdout: its JSON records, one per line (other lines are ignored). */
export function parseRecords(stdout) {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** What one run measured, as the table's quantities. */
export function metrics(records) {
  const one = (kind) => records.find((r) => r.kind === kind);
  const req = (name) => records.find((r) => r.kind === 'request' && r.name === name);
  const perToken = (ms, n) => (n > 0 ? ms / n : NaN);
  const [short, long, repeat] = [req('short'), req('long'), req('repeat')];
  const kv = records.filter((r) => r.kind === 'request').map((r) => r.kv_bytes);
  const load = one('load');
  return {
    load_ms: load?.load_ms,
    pkg_load_ms: one('pkg_load')?.load_ms,
    short_prefill: short && perToken(short.prefill_ms, short.prompt_tokens),
    short_decode: short && perToken(short.decode_ms, short.decoded),
    long_prefill: long && perToken(long.prefill_ms, long.prompt_tokens),
    long_decode: long && perToken(long.decode_ms, long.decoded),
    ttft_first: long?.ttft_ms,
    ttft_repeat: repeat?.ttft_ms,
    ttft_speedup: long && repeat ? long.ttft_ms / repeat.ttft_ms : undefined,
    peak_mb: one('memory') && one('memory').peak_bytes / 1e6,
    rss_mb: one('rss') && one('rss').rss_bytes / 1e6,
    kv_mb: kv.length ? Math.max(...kv) / 1e6 : undefined,
    // `needle bench --backend gpu`: every GPU buffer over the container (issue 40: <= 1.3x).
    gpu_x: load?.device_bytes > 0 ? load.device_bytes / load.container_bytes : undefined,
    decoded: Math.min(short?.decoded ?? Infinity, long?.decoded ?? Infinity),
  };
}

/** Per variant: the median of each quantity over its successful runs. */
export function summarize(variants) {
  return variants.map((v) => {
    const per = v.runs.map(metrics);
    const keys = per.length ? Object.keys(per[0]) : [];
    const med = Object.fromEntries(keys.map((k) => [k, median(per.map((m) => m[k]))]));
    return {
      name: v.name,
      side: v.side,
      env: v.env,
      runs: per.length,
      failed: v.errors.length,
      ...med,
    };
  });
}

const COLUMNS = [
  ['load ms', 'load_ms', 0],
  ['Needle.load ms', 'pkg_load_ms', 0],
  ['prefill ms/tok (short)', 'short_prefill', 1],
  ['decode ms/tok (short)', 'short_decode', 1],
  ['prefill ms/tok (long)', 'long_prefill', 1],
  ['decode ms/tok (long)', 'long_decode', 1],
  ['TTFT first ms', 'ttft_first', 0],
  ['TTFT repeat ms', 'ttft_repeat', 0],
  ['repeat speed-up', 'ttft_speedup', 2],
  ['peak MB', 'peak_mb', 1],
  ['Node RSS MB', 'rss_mb', 1],
  ['KV MB', 'kv_mb', 2],
  ['GPU memory / container', 'gpu_x', 2],
];
// Ratios to the peer: time and memory, lower is better for us.
const RATIOS = [
  'load_ms',
  'short_prefill',
  'short_decode',
  'long_prefill',
  'long_decode',
  'ttft_repeat',
  'peak_mb',
  'kv_mb',
];

// A threaded variant (any pool size, `-tN`) against its single-threaded twin (same build
// otherwise, same environment), and the native GPU path against the native CPU path on one
// thread, per GPU kernel variant (`-plain`, `-tiled`, `-subgroup`; issue 40's targets:
// prefill >= 20x, decode >= 2x).
const TWINS = [
  [/^native-threaded(-t\d+)?$/, 'native'],
  [/^chromium-threaded(-t\d+)?$/, 'chromium-simd'],
  [/^native-gpu(-\w+)?$/, 'native'],
];
const SPEEDUPS = ['short_prefill', 'short_decode', 'long_prefill', 'long_decode', 'ttft_repeat'];

const fmt = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
const row = (cells) => `| ${cells.join(' | ')} |`;

/** The medians, then each of our variants over the peer in the same environment (native / wasm). */
export function table(summary) {
  const used = COLUMNS.filter(([, key]) => summary.some((s) => Number.isFinite(s[key])));
  const lines = [
    row(['variant', 'runs', ...used.map(([h]) => h)]),
    row(['---', '---:', ...used.map(() => '---:')]),
  ];
  for (const s of summary) {
    const runs = s.failed ? `${s.runs} (${s.failed} failed)` : String(s.runs);
    lines.push(row([s.name, runs, ...used.map(([, key, d]) => fmt(s[key], d))]));
  }
  const peers = Object.fromEntries(summary.filter((s) => s.side === 'peer').map((s) => [s.env, s]));
  const ours = summary.filter((s) => s.side === 'ours' && peers[s.env]);
  if (ours.length) {
    const keys = RATIOS.filter((k) => used.some(([, key]) => key === k));
    const heads = keys.map((k) => COLUMNS.find(([, key]) => key === k)[0]);
    lines.push(
      '',
      'Ratio to the peer in the same environment (ours / peer; below 1: we are faster or smaller):',
      '',
    );
    lines.push(row(['variant', 'vs', ...heads]), row(['---', '---', ...heads.map(() => '---:')]));
    for (const s of ours) {
      const p = peers[s.env];
      lines.push(row([s.name, p.name, ...keys.map((k) => fmt(s[k] / p[k], 2))]));
    }
  }
  const byName = Object.fromEntries(summary.map((s) => [s.name, s]));
  const twins = TWINS.flatMap(([threaded, one]) =>
    byName[one] ? summary.filter((s) => threaded.test(s.name)).map((s) => [s.name, one]) : [],
  );
  if (twins.length) {
    const keys = SPEEDUPS.filter((k) => used.some(([, key]) => key === k));
    const heads = keys.map((k) => COLUMNS.find(([, key]) => key === k)[0]);
    lines.push(
      '',
      'Speed-up over the same environment on one CPU thread (threads, the GPU; one thread / variant; above 1: faster):',
      '',
    );
    lines.push(row(['variant', 'vs', ...heads]), row(['---', '---', ...heads.map(() => '---:')]));
    for (const [t, one] of twins)
      lines.push(row([t, one, ...keys.map((k) => fmt(byName[one][k] / byName[t][k], 2))]));
  }
  const early = summary.filter((s) => Number.isFinite(s.decoded) && s.decoded < 15);
  if (early.length)
    lines.push(
      '',
      `stopped early (decoded tokens): ${early.map((s) => `${s.name} ${s.decoded}`).join(', ')}`,
    );
  return `${lines.join('\n')}\n`;
}
