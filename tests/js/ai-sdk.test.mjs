// needle-web/ai-sdk with the real `ai` package on the default model, in both versions npm installs:
// `ai` 7 (Node 22 and later) and `ai` 6 (what `npm i ai` gives on Node 20, which the package's
// `engines` allows; the devDependency `ai6`). generateText / streamText with tools give the calls
// `needle run --constrained` makes for the request the SDK sent, generateObject gives the value of
// the CLI's full-schema call, and the SDK's multi-step loop does not run a tool twice with the same
// input.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import * as ai7 from 'ai';
import * as ai6 from 'ai6';
import { Needle } from '../../pkg/index.js';
import { createNeedle } from '../../pkg/ai-sdk.js';
import { schemaTool } from '../../pkg/structured.js';
import { defaultModel, nativeRun } from './helpers.mjs';

const MODEL = defaultModel();
const ENV = JSON.parse(
  readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'),
);
const SDKS = [
  ['ai 7', ai7],
  ['ai 6', ai6],
];
let needle;
let provider;

/** The smart-home tools in one SDK's terms (`execute` for each, when given). */
const toolsOf = (ai, execute = {}) =>
  Object.fromEntries(
    ENV.tools.map((t) => [
      t.name,
      ai.tool({
        description: t.description,
        inputSchema: ai.jsonSchema(t.parameters),
        execute: execute[t.name],
      }),
    ]),
  );

/** The provider's model, recording the options the SDK calls it with. */
function spied() {
  const model = provider();
  const calls = [];
  const wrap = (name) => {
    const original = model[name].bind(model);
    return { [name]: (options) => (calls.push(options), original(options)) }[name];
  };
  return {
    model: Object.assign(Object.create(model), {
      doGenerate: wrap('doGenerate'),
      doStream: wrap('doStream'),
    }),
    calls,
  };
}

/** `needle run --json` for the SDK's call options (tools offered as the provider offers them). */
function native(options, extra = []) {
  const text = options.prompt
    .at(-1)
    .content.map((p) => p.text)
    .join('');
  const tools = options.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
  return nativeRun(MODEL, text, JSON.stringify(tools), [
    '--constrained',
    '--max-tokens',
    String(options.maxOutputTokens),
    ...extra,
  ]);
}

const callsOf = (toolCalls) => toolCalls.map((c) => ({ name: c.toolName, arguments: c.input }));

before(async () => {
  needle = await Needle.load(new Uint8Array(readFileSync(MODEL)));
  provider = createNeedle({ needle });
});
after(() => needle.dispose());

for (const [label, ai] of SDKS) {
  test(`${label}: generateText with tools: the calls the CLI makes`, async () => {
    for (const prompt of [
      'Close the living room blinds and turn on the study fan',
      'Set the thermostat to 22 degrees',
    ]) {
      const { model, calls } = spied();
      const r = await ai.generateText({ model, prompt, tools: toolsOf(ai), maxOutputTokens: 64 });
      assert.equal(calls.length, 1);
      const cli = native(calls[0]);
      assert.ok(cli.function_calls.length > 0, prompt);
      assert.deepEqual(callsOf(r.toolCalls), cli.function_calls, prompt);
      assert.equal(r.finishReason, 'tool-calls');
      assert.equal(r.usage.inputTokens, cli.usage.prompt_tokens);
    }
  });

  test(`${label}: streamText with tools: the same calls, streamed`, async () => {
    const prompt = 'Close the living room blinds and turn on the study fan';
    const { model, calls } = spied();
    const r = ai.streamText({ model, prompt, tools: toolsOf(ai), maxOutputTokens: 64 });
    const types = new Set();
    for await (const part of r.fullStream) types.add(part.type);
    assert.ok(
      types.has('tool-input-delta') && types.has('tool-call') && types.has('finish'),
      [...types].join(),
    );
    assert.deepEqual(callsOf(await r.toolCalls), native(calls[0]).function_calls);
    assert.equal(await r.finishReason, 'tool-calls');
  });

  test(`${label}: generateObject with a JSON schema: the value of the CLI full-schema call`, async () => {
    const schema = {
      type: 'object',
      properties: {
        room: { type: 'string', enum: ['kitchen', 'living_room', 'bedroom', 'study'] },
        brightness_percent: { type: 'integer', minimum: 0, maximum: 100 },
      },
      required: ['room', 'brightness_percent'],
    };
    const prompt = 'Dim the bedroom lights to 30 percent';
    const { model, calls } = spied();
    const { object } = await ai.generateObject({
      model,
      schema: ai.jsonSchema(schema),
      prompt,
      maxOutputTokens: 64,
    });
    const format = calls[0].responseFormat;
    assert.equal(format.type, 'json');
    const { tool: respond, read } = schemaTool(format.schema, format.name ?? 'respond');
    const flags = ['--constrained', '--require-call', '--full-schema', '--max-tokens', '64'];
    const cli = nativeRun(MODEL, prompt, JSON.stringify([respond]), flags);
    assert.deepEqual(object, read(cli.function_calls[0].arguments));
    assert.ok(['kitchen', 'living_room', 'bedroom', 'study'].includes(object.room));
  });

  test(`${label}: settings the engine cannot honour come back as unsupported warnings`, async () => {
    const r = await ai.generateText({
      model: provider(),
      prompt: 'Play some jazz',
      tools: toolsOf(ai),
      maxOutputTokens: 32,
      presencePenalty: 0.5,
    });
    assert.ok(
      r.warnings.some((w) => w.type === 'unsupported' && w.feature === 'presencePenalty'),
      JSON.stringify(r.warnings),
    );
  });

  test(`${label}: the multi-step loop runs each call once; a repeat is left out and ends the loop`, async () => {
    // Told only {ok: true}, the model asks for the call it has just made again.
    const prompt = 'Turn on the kitchen lights';
    const steps = async (stream, repeatCalls) => {
      const executed = [];
      const execute = Object.fromEntries(
        ENV.tools.map((t) => [t.name, async (input) => (executed.push({ name: t.name, arguments: input }), { ok: true })]),
      );
      const model = createNeedle({ needle, repeatCalls })();
      const options = { model, prompt, tools: toolsOf(ai, execute), maxOutputTokens: 64, stopWhen: ai.stepCountIs(3) };
      const r = stream ? ai.streamText(options) : await ai.generateText(options);
      if (stream) for await (const _ of r.fullStream);
      return { steps: await r.steps, executed };
    };
    const [first] = nativeRun(MODEL, prompt, JSON.stringify(ENV.tools.map((t) => ({ type: 'function', function: t }))), [
      '--constrained',
      '--max-tokens',
      '64',
    ]).function_calls;
    assert.equal(first.name, 'control_lights');
    for (const stream of [false, true]) {
      const guarded = await steps(stream, false);
      assert.deepEqual(guarded.executed, [first], `stream ${stream}: the call ran once`);
      assert.equal(guarded.steps.length, 2, 'the answer of repeats ends the loop');
      const last = guarded.steps[1];
      assert.deepEqual(last.toolCalls, []);
      assert.equal(last.finishReason, 'stop');
      const repeated = last.providerMetadata.needle.repeatedCalls;
      assert.deepEqual(repeated.map((c) => ({ name: c.toolName, arguments: JSON.parse(c.input) })), [first]);
      // repeatCalls: true gives the SDK the repeat, and it runs the tool again.
      const loose = await steps(stream, true);
      assert.deepEqual(loose.executed.slice(0, 2), [first, first], `stream ${stream}: without the guard the call runs again`);
    }
  });
}
