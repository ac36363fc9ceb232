// needle-web/ai-sdk with the real `ai` package on the default model: generateText / streamText with
// tools give the calls `needle run --constrained` makes for the request the SDK sent, and
// generateObject gives the value of the CLI's full-schema call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { generateText, streamText, generateObject, jsonSchema, tool } from 'ai';
import { Needle } from '../../pkg/index.js';
import { createNeedle } from '../../pkg/ai-sdk.js';
import { schemaTool } from '../../pkg/structured.js';
import { defaultModel, nativeRun } from './helpers.mjs';

const MODEL = defaultModel();
const ENV = JSON.parse(
  readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'),
);
let needle;
let provider;

const TOOLS = Object.fromEntries(
  ENV.tools.map((t) => [
    t.name,
    tool({ description: t.description, inputSchema: jsonSchema(t.parameters) }),
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

test('generateText with tools: the calls the CLI makes', async () => {
  for (const prompt of [
    'Close the living room blinds and turn on the study fan',
    'Set the thermostat to 22 degrees',
  ]) {
    const { model, calls } = spied();
    const r = await generateText({ model, prompt, tools: TOOLS, maxOutputTokens: 64 });
    assert.equal(calls.length, 1);
    const cli = native(calls[0]);
    assert.ok(cli.function_calls.length > 0, prompt);
    assert.deepEqual(callsOf(r.toolCalls), cli.function_calls, prompt);
    assert.equal(r.finishReason, 'tool-calls');
    assert.equal(r.usage.inputTokens, cli.usage.prompt_tokens);
  }
});

test('streamText with tools: the same calls, streamed', async () => {
  const prompt = 'Close the living room blinds and turn on the study fan';
  const { model, calls } = spied();
  const r = streamText({ model, prompt, tools: TOOLS, maxOutputTokens: 64 });
  const types = new Set();
  for await (const part of r.fullStream) types.add(part.type);
  assert.ok(
    types.has('tool-input-delta') && types.has('tool-call') && types.has('finish'),
    [...types].join(),
  );
  assert.deepEqual(callsOf(await r.toolCalls), native(calls[0]).function_calls);
  assert.equal(await r.finishReason, 'tool-calls');
});

test('generateObject with a JSON schema: the value of the CLI full-schema call', async () => {
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
  const { object } = await generateObject({
    model,
    schema: jsonSchema(schema),
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

test('settings the engine cannot honour come back as unsupported warnings', async () => {
  const r = await generateText({
    model: provider(),
    prompt: 'Play some jazz',
    tools: TOOLS,
    maxOutputTokens: 32,
    presencePenalty: 0.5,
  });
  assert.ok(
    r.warnings.some((w) => w.type === 'unsupported' && w.feature === 'presencePenalty'),
    JSON.stringify(r.warnings),
  );
});
