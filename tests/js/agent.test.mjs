// needle.run() on the default model with real JS functions: calls executed as the native CLI
// answers them, thrown errors and unknown tools as results, ungrounded numbers withheld, aborts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { defaultModel, nativeRun } from './helpers.mjs';

const MODEL = defaultModel();
const ENV = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
const TOOLS_JSON = JSON.stringify(ENV.tools);
// The agent's prompt is the one-shot prompt (no date fact), so the first step is the CLI's answer.
const OPTS = { system: ENV.system, constrained: true, autoDate: false, maxTokens: 64 };
let needle;

/** First calls the CLI makes for `query` with the smart-home environment, constrained. */
const native = (query) => nativeRun(MODEL, query, TOOLS_JSON, ['--system', ENV.system, '--constrained', '--max-tokens', '64']);

/** Functions for every smart-home tool that record their calls. */
function recorder(overrides = {}) {
  const calls = [];
  const functions = {};
  for (const t of ENV.tools) {
    functions[t.name] = overrides[t.name] ?? (async (args) => (calls.push({ name: t.name, arguments: args }), { ok: true, ...args }));
  }
  return { calls, functions };
}

before(async () => {
  needle = await Needle.load(new Uint8Array(readFileSync(MODEL)));
});
after(() => needle.dispose());

test('run() executes the calls the model makes (as the native CLI answers) on real functions and returns their results', async () => {
  const query = 'Close the living room blinds and turn on the study fan';
  const expected = native(query).function_calls;
  assert.equal(expected.length, 2, 'the CLI calls two tools');
  const house = recorder();
  const r = await needle.run(query, { ...OPTS, tools: [...ENV.tools, house.functions] });
  assert.deepEqual(r.steps[0].function_calls, expected);
  assert.deepEqual(house.calls.slice(0, 2), expected, 'each call ran once, in order, with its arguments');
  assert.deepEqual(r.steps[0].results, expected.map((c) => ({ ok: true, ...c.arguments })));
  assert.deepEqual(r.results, r.steps.flatMap((s) => s.results));
  assert.ok(r.steps.length >= 1 && r.steps.length <= 8);
  assert.equal(house.calls.length, r.results.length);
  const last = r.function_calls || [];
  assert.ok(r.type !== 'call' || last.length === 0 || r.steps.length === 8, 'stopped on an answer without calls, or at maxSteps');
});

test('a refusal runs nothing: no steps, no results', async () => {
  const query = 'Play some jazz';
  assert.deepEqual(native(query).function_calls, []);
  const house = recorder();
  const r = await needle.run(query, { ...OPTS, tools: [...ENV.tools, house.functions] });
  assert.deepEqual(r.steps, []);
  assert.deepEqual(r.results, []);
  assert.equal(r.type, 'refuse');
  assert.equal(house.calls.length, 0);
});

test('maxSteps bounds the steps; a thrown error and an unknown tool become {error} results', async () => {
  const query = 'Turn on the kitchen lights';
  assert.equal(native(query).function_calls[0].name, 'control_lights');
  const failing = recorder({
    control_lights: async () => {
      throw new Error('the kitchen bulb is broken');
    },
  });
  const r = await needle.run(query, { ...OPTS, maxSteps: 1, tools: [...ENV.tools, failing.functions] });
  assert.equal(r.steps.length, 1);
  assert.deepEqual(r.results, [{ error: 'the kitchen bulb is broken' }]);

  // The schema without a function: the model still sees (and calls) the tool.
  const others = recorder();
  delete others.functions.control_lights;
  const u = await needle.run(query, { ...OPTS, maxSteps: 1, tools: [...ENV.tools, others.functions] });
  assert.deepEqual(u.results, [{ error: 'unknown tool: control_lights' }]);
  const zero = await needle.run(query, { ...OPTS, maxSteps: 0, tools: [...ENV.tools, others.functions] });
  assert.deepEqual(zero.steps, [], 'maxSteps 0 executes nothing');
  assert.equal(zero.function_calls[0].name, 'control_lights');
});

test('strict: a call whose numbers are not in the request is not executed; strict: false runs it', async () => {
  const query = 'Make it warmer in here';
  const cli = native(query);
  assert.equal(cli.function_calls[0].name, 'set_thermostat', cli.text);
  assert.deepEqual(cli.validation.ungrounded, ['set_thermostat.temperature'], 'the engine flags the invented number');
  const house = recorder();
  const r = await needle.run(query, { ...OPTS, maxSteps: 1, tools: [...ENV.tools, house.functions] });
  assert.deepEqual(r.steps[0].results, [{ error: 'ungrounded temperature' }]);
  assert.equal(house.calls.length, 0, 'the function never ran');
  const loose = await needle.run(query, { ...OPTS, maxSteps: 1, strict: false, tools: [...ENV.tools, house.functions] });
  assert.deepEqual(loose.steps[0].results, [{ ok: true, ...cli.function_calls[0].arguments }]);
});

test('an abort stops the run within a step (a pending function) and between steps, keeping what ran', async () => {
  const query = 'Close the living room blinds and turn on the study fan';
  const stop = new AbortController();
  let seen = null;
  const slow = recorder({
    control_fan: (args, { signal }) => {
      seen = signal;
      queueMicrotask(() => stop.abort());
      return new Promise(() => {}); // a device that never answers
    },
  });
  await assert.rejects(needle.run(query, { ...OPTS, signal: stop.signal, tools: [...ENV.tools, slow.functions] }), (e) => {
    assert.equal(e.name, 'AbortError');
    assert.equal(e.code, 'aborted');
    assert.deepEqual(e.steps, [], 'the step did not finish');
    return true;
  });
  assert.ok(seen && seen.aborted, 'the function got the signal');
  assert.equal(slow.calls.length, 1, 'the blinds ran before the abort');

  const between = new AbortController();
  const r = needle.run(query, { ...OPTS, signal: between.signal, onStep: () => between.abort(), tools: [...ENV.tools, recorder().functions] });
  await assert.rejects(r, (e) => e.name === 'AbortError' && e.steps.length === 1 && e.results.length === 2);

  // During generation: the engine stops within a token.
  const gen = new AbortController();
  const g = needle.run(query, { ...OPTS, signal: gen.signal, onToken: () => gen.abort(), tools: [...ENV.tools, recorder().functions] });
  await assert.rejects(g, (e) => e.name === 'AbortError' && e.result && e.result.stop_reason === 'aborted');
});
