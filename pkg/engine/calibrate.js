// The calibration behind backend 'auto' (engine/auto.js): one small workload, the same on each
// engine, timed; the faster engine serves. The workload is a request's own path through the
// session (start, prefill in chunks, token by token, finish), so it times what a request pays on
// this model and this device: dispatches, readbacks and the host's calls included.
import { NeedleError } from '../protocol.js';
import { now } from './generate.js';

// A short one-tool request: its prompt is one prefill chunk (38 tokens with the default model's
// tokenizer), then DECODE_STEPS greedy tokens. Small, because a request that arrives during a run
// waits for it (runs go between requests, engine/auto.js).
const TOOL = {
  name: 'control_lights',
  description: 'Turn lights on or off in a room',
  parameters: {
    type: 'object',
    properties: { room: { type: 'string' }, on: { type: 'boolean' } },
    required: ['room', 'on'],
  },
};
const DECODE_STEPS = 4;
export const WORKLOAD = Object.freeze({
  query: 'Turn on the kitchen lights',
  tools: JSON.stringify([TOOL]),
  maxTokens: DECODE_STEPS,
  temperature: 0,
});
const PREFILL_CHUNK = 64;

/**
 * Runs WORKLOAD once on `engine` (`{ session, call }`, call.js's caller) from an empty state, and
 * leaves it empty: `{ prefill_ms, decode_ms, ms, tokens }` (`tokens`: the ones decoded, the same
 * on every backend at temperature 0).
 */
export async function measureWorkload({ session, call }) {
  session.reset();
  const t0 = now();
  await call(session, 'start', JSON.stringify(WORKLOAD));
  while (!(await call(session, 'prefill', PREFILL_CHUNK))) {}
  const t1 = now();
  let tokens = 0;
  while ((await call(session, 'next')) != null) tokens++;
  await call(session, 'finish');
  const t2 = now();
  session.reset();
  return { prefill_ms: t1 - t0, decode_ms: t2 - t1, ms: t2 - t0, tokens };
}

/** The better of two figures of one engine (the lower total): a stray pause counts once. */
export const best = (a, b) => (a === null || b.ms < a.ms ? b : a);

/**
 * The choice from both engines' figures: `{ backend: 'webgpu' | 'cpu', reason }`. The GPU serves
 * only when it measured faster; a figure that is not a finite time is a failed calibration.
 */
export function decide(cpu, gpu) {
  for (const [name, f] of [
    ['CPU', cpu],
    ['WebGPU', gpu],
  ]) {
    if (!(f && Number.isFinite(f.ms) && f.ms >= 0))
      throw new NeedleError('internal', `the ${name} calibration gave no time`);
  }
  const figures = `WebGPU ${gpu.ms.toFixed(1)} ms, CPU ${cpu.ms.toFixed(1)} ms for the calibration request`;
  return gpu.ms < cpu.ms
    ? { backend: 'webgpu', reason: `WebGPU measured faster on this model (${figures})` }
    : { backend: 'cpu', reason: `the CPU measured as fast or faster on this model (${figures})` };
}
