// The GPU backend against the CPU path on one container (issue 40: the shipped geometry's f32
// parity, where upstream's reference rows are not stored): the logits of a prompt from both
// native CLIs, each row's largest deviation over its largest value, and whether every row's
// argmax agrees. The CPU path is parity-exact with upstream (tests/v3_parity.rs), so this
// carries the GPU's parity to geometries the fixtures do not cover.
//   node tools/bench/gpu-parity.mjs [--model bench/needle3-shipped-w4.cact] [--kv f32|int8]
//                                   [--kernels plain|tiled|subgroup] [--text "..."]
// `--kernels`: the GPU's kernel variant (src/gpu/README.md), passed as the CLI's --gpu-kernels.
// Needs target/release/needle and target/gpu/release/needle (`./dev.sh bench` builds both).
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'bench/needle3-shipped-w4.cact' },
    kv: { type: 'string', default: 'f32' },
    kernels: { type: 'string', default: 'plain' },
    text: { type: 'string', default: 'Turn on the kitchen lights and set the thermostat to 21' },
  },
});
const cli = (bin, args) =>
  execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const ids = JSON.parse(
  cli('target/release/needle', ['tokenize', '--model', values.model, '--text', values.text]),
);
const dir = mkdtempSync(join(tmpdir(), 'needle-gpu-parity-'));
const rows = (bin, backend, extra = []) => {
  const out = join(dir, `${backend}.f32`);
  const args = ['logits', '--model', values.model, '--tokens', ids.join(','), '--kv', values.kv];
  const t0 = performance.now();
  cli(bin, [...args, '--backend', backend, ...extra, '--out', out]);
  const ms = performance.now() - t0;
  const b = readFileSync(out);
  return { rows: new Float32Array(b.buffer, b.byteOffset, b.length / 4), ms };
};
try {
  const cpu = rows('target/release/needle', 'cpu');
  const gpu = rows('target/gpu/release/needle', 'gpu', ['--gpu-kernels', values.kernels]);
  const v = cpu.rows.length / ids.length;
  let worst = 0;
  let agree = 0;
  const argmax = (r) => r.reduce((best, x, j) => (x > r[best] ? j : best), 0);
  for (let i = 0; i < ids.length; i++) {
    const a = cpu.rows.subarray(i * v, (i + 1) * v);
    const g = gpu.rows.subarray(i * v, (i + 1) * v);
    const scale = a.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    worst = Math.max(worst, g.reduce((m, x, j) => Math.max(m, Math.abs(x - a[j])), 0) / scale);
    if (argmax(a) === argmax(g)) agree++;
  }
  console.log(
    `${values.model} kv ${values.kv}, ${values.kernels} kernels, ${ids.length} tokens: worst row deviation ` +
      `${worst.toExponential(2)} of the row's largest value, argmax equal ${agree}/${ids.length}; ` +
      `cpu ${cpu.ms.toFixed(0)} ms, gpu ${gpu.ms.toFixed(0)} ms (whole CLI runs)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
