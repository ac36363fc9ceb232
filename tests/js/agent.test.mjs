// needle.run() on the default model with real JS functions: calls executed as the native CLI
// answers them, thrown errors and unknown tools as results, ungrounded numbers withheld, aborts,
// constrained decoding by default, and a call repeated after its result not run again.
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
  assert.deepEqual(r.results, r.steps.flatMap((s) => s.results.filter((_, i) => !s.repeated.includes(i))));
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
  const query = 'Set the thermostat to twenty degrees'; // in words: the 20 the model writes is not in it
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

test('run() decodes constrained unless told otherwise: only calls that fit the schema reach the functions', async () => {
  // A light tool of the caller's own: unconstrained, the model runs on past its call, which then
  // does not parse.
  const light = {
    name: 'control_lights',
    description: 'Turn lights on or off in a room.',
    parameters: {
      type: 'object',
      properties: { room: { type: 'string', enum: ['kitchen', 'bedroom'] }, action: { type: 'string', enum: ['on', 'off'] } },
      required: ['room', 'action'],
    },
  };
  const query = 'Switch the bedroom light off';
  const flags = ['--max-tokens', '64'];
  const free = nativeRun(MODEL, query, JSON.stringify([light]), flags);
  const held = nativeRun(MODEL, query, JSON.stringify([light]), [...flags, '--constrained']);
  assert.deepEqual(held.function_calls, [{ name: 'control_lights', arguments: { room: 'bedroom', action: 'off' } }]);
  assert.notDeepEqual(free.function_calls, held.function_calls, free.text);
  const calls = [];
  const fn = (args) => (calls.push(args), { ok: true });
  const r = await needle.run(query, { tools: [{ ...light, fn }], maxTokens: 64, maxSteps: 1 });
  assert.deepEqual(r.steps[0].function_calls, held.function_calls);
  assert.deepEqual(calls, [{ room: 'bedroom', action: 'off' }]);
  const loose = await needle.run(query, { tools: [{ ...light, fn }], maxTokens: 64, maxSteps: 1, constrained: false });
  assert.deepEqual(loose.steps.map((s) => s.function_calls).flat(), free.function_calls, 'constrained: false is the unconstrained answer');
});

/** Functions for every smart-home tool that record their calls and answer `{ok: true}`. */
function acknowledging() {
  const calls = [];
  const functions = Object.fromEntries(ENV.tools.map((t) => [t.name, (args) => (calls.push({ name: t.name, arguments: args }), { ok: true })]));
  return { calls, functions };
}

test('a call the model repeats after its result is not run again: the step reports it and the run ends', async () => {
  // Told only {ok: true}, the model asks for the calls it has just made again.
  for (const query of ['Turn on the kitchen lights', 'Dim the bedroom lights to 30 percent']) {
    const expected = native(query).function_calls;
    const house = acknowledging();
    const steps = [];
    const r = await needle.run(query, { ...OPTS, tools: [...ENV.tools, house.functions], onStep: (s) => steps.push(s) });
    assert.deepEqual(house.calls, expected, `${query}: each call ran once`);
    assert.deepEqual(r.results, expected.map(() => ({ ok: true })));
    assert.equal(r.steps.length, 2, query);
    const [first, last] = r.steps;
    assert.deepEqual(first.repeated, []);
    assert.deepEqual(last.function_calls, expected, `${query}: the model asked for the same calls again`);
    assert.deepEqual(last.repeated, expected.map((_, i) => i));
    assert.deepEqual(last.results, first.results, 'a repeat carries the result it had');
    assert.deepEqual(steps, r.steps, 'onStep saw the stopped step too');
    assert.deepEqual(r.function_calls, expected, 'the run ends on the repeating answer');

    // repeatCalls: true is the loop without the guard: the same calls run again.
    const again = acknowledging();
    const loose = await needle.run(query, { ...OPTS, repeatCalls: true, maxSteps: 2, tools: [...ENV.tools, again.functions] });
    assert.deepEqual(again.calls, [...expected, ...expected], `${query}: without the guard the side effects repeat`);
    assert.deepEqual(loose.steps.map((s) => s.repeated), [[], []]);
  }
  await assert.rejects(needle.run('x', { repeatCalls: 'yes' }), (e) => e.code === 'invalid_argument');
});
