// The benchmark's arithmetic (tools/bench/report.mjs) on made-up records: no timing, no model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRecords, median, metrics, summarize, table } from '../../tools/bench/report.mjs';

const request = (name, prompt_tokens, prefill_ms, decode_ms, decoded, ttft_ms, kv_bytes) =>
  ({ kind: 'request', name, prompt_tokens, prefill_ms, ttft_ms, decode_ms, decoded, kv_bytes });
const runOf = (scale) => [
  { kind: 'load', load_ms: 100 * scale },
  request('short', 130, 1300 * scale, 630 * scale, 63, 1310 * scale, 1e6),
  request('long', 1000, 20000 * scale, 945 * scale, 63, 20000 * scale, 4e6),
  request('repeat', 990, 4000 * scale, 0, 0, 4000 * scale, 4e6),
  { kind: 'memory', peak_bytes: 200e6 * scale },
];

test('parseRecords keeps the JSON lines and skips the rest', () => {
  const out = 'warming up\n{"kind":"load","load_ms":3.5}\n\n{"kind":"memory","peak_bytes":7}\n';
  assert.deepEqual(parseRecords(out), [{ kind: 'load', load_ms: 3.5 }, { kind: 'memory', peak_bytes: 7 }]);
});

test('median of odd and even counts, ignoring missing values', () => {
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([undefined, 2, NaN]), 2);
  assert.ok(Number.isNaN(median([])));
});

test('metrics turn records into per-token times, the repeat speed-up and megabytes', () => {
  const m = metrics(runOf(1));
  assert.equal(m.short_prefill, 10);
  assert.equal(m.short_decode, 10);
  assert.equal(m.long_prefill, 20);
  assert.equal(m.long_decode, 15);
  assert.equal(m.ttft_speedup, 5);
  assert.equal(m.peak_mb, 200);
  assert.equal(m.kv_mb, 4);
  assert.equal(m.pkg_load_ms, undefined);
  assert.equal(m.gpu_x, undefined, 'no GPU buffers: no ratio');
  const onGpu = [{ kind: 'load', load_ms: 1, container_bytes: 50e6, device_bytes: 65e6 }];
  assert.equal(metrics(onGpu).gpu_x, 1.3);
  const onCpu = [{ kind: 'load', load_ms: 1, container_bytes: 50e6, device_bytes: 0 }];
  assert.equal(metrics(onCpu).gpu_x, undefined);
});

test('threaded and GPU variants are set against the native CPU path on one thread', () => {
  const gpuRun = runOf(0.05).map((r) =>
    r.kind === 'load' ? { ...r, container_bytes: 50e6, device_bytes: 64e6 } : r,
  );
  const summary = summarize([
    { name: 'native', side: 'ours', env: 'native', runs: [runOf(1)], errors: [] },
    { name: 'native-threaded-t4', side: 'ours', env: 'native', runs: [runOf(0.25)], errors: [] },
    { name: 'native-gpu', side: 'ours', env: 'native', runs: [gpuRun], errors: [] },
  ]);
  const md = table(summary);
  // prefill short/long, decode short/long, repeat TTFT: 1 / 0.25 = 4x, 1 / 0.05 = 20x.
  assert.match(md, /\| native-threaded-t4 \| native \| 4\.00 \| 4\.00 \| 4\.00 \| 4\.00 \| 4\.00 \|/);
  assert.match(md, /\| native-gpu \| native \| 20\.00 \| 20\.00 \| 20\.00 \| 20\.00 \| 20\.00 \|/);
  assert.match(md, /GPU memory \/ container/);
  assert.match(md, /\| native-gpu \| 1 \|.* 1\.28 \|/);
});

test('summaries take medians over runs and the table shows ratios to the peer of the same environment', () => {
  const summary = summarize([
    { name: 'native', side: 'ours', env: 'native', runs: [runOf(1), runOf(3), runOf(2)], errors: [] },
    { name: 'peer-native', side: 'peer', env: 'native', runs: [runOf(4)], errors: ['exit 1'] },
    { name: 'node-simd', side: 'ours', env: 'wasm', runs: [runOf(1)], errors: [] },
  ]);
  assert.equal(summary[0].load_ms, 200);
  assert.equal(summary[1].failed, 1);
  const md = table(summary);
  assert.match(md, /\| native \| 3 \| 200 \|/);
  assert.match(md, /\| peer-native \| 1 \(1 failed\) \|/);
  // 200 / 400 for load; node-simd has no wasm peer, so no ratio row.
  assert.match(md, /\| native \| peer-native \| 0\.50 \|/);
  assert.doesNotMatch(md, /\| node-simd \| peer/);
  // A quantity no variant measured gets no column.
  assert.doesNotMatch(md, /Needle\.load/);
});
