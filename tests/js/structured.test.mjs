// Structured output on the default model: needle.generate(text, {schema}), extract({fullSchema}) and
// chat.completions' response_format give the value the native CLI's full-schema call gives
// (`needle run --constrained --require-call --full-schema`), and it validates against the schema;
// schemas the matcher cannot hold, and OpenAI fields the engine cannot honour, are typed errors or
// logged; stop sequences end the content.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { Completions } from '../../pkg/openai.js';
import { schemaTool } from '../../pkg/structured.js';
import { defaultModel, nativeRun } from './helpers.mjs';

const MODEL = defaultModel();
let needle;

const LIGHTS = {
  title: 'control_lights',
  type: 'object',
  properties: {
    room: { type: 'string', enum: ['kitchen', 'living_room', 'bedroom', 'study'] },
    action: { type: 'string', enum: ['on', 'off', 'dim'] },
    brightness_percent: { type: 'integer', minimum: 0, maximum: 100 },
  },
  required: ['room', 'action'],
};
const ROOMS = {
  title: 'rooms',
  type: 'array',
  items: { enum: ['kitchen', 'living_room', 'bedroom', 'study'] },
  minItems: 1,
  maxItems: 3,
};
const FLIGHT = {
  title: 'book_flight',
  type: 'object',
  properties: {
    destination: { type: 'string', pattern: '^[A-Z]{3}$' },
    passengers: { type: 'integer', minimum: 1, maximum: 9 },
    note: { type: 'string', maxLength: 20 },
  },
  required: ['destination', 'passengers'],
};

/** Why `v` fails `schema` (the keywords these tests use), or null. */
function invalid(v, schema) {
  if (schema.enum) return schema.enum.includes(v) ? null : `${JSON.stringify(v)} not in enum`;
  const type = Array.isArray(v)
    ? 'array'
    : v === null
      ? 'null'
      : Number.isInteger(v)
        ? 'integer'
        : typeof v;
  if (schema.type && schema.type !== type && !(schema.type === 'number' && type === 'integer'))
    return `${JSON.stringify(v)} is not ${schema.type}`;
  if (type === 'integer' || type === 'number') {
    if (v < (schema.minimum ?? -Infinity) || v > (schema.maximum ?? Infinity))
      return `${v} out of bounds`;
  }
  if (type === 'string') {
    if (v.length > (schema.maxLength ?? Infinity) || v.length < (schema.minLength ?? 0))
      return `${v} length`;
    if (schema.pattern && !new RegExp(schema.pattern).test(v))
      return `${v} fails ${schema.pattern}`;
  }
  if (type === 'array') {
    if (v.length < (schema.minItems ?? 0) || v.length > (schema.maxItems ?? Infinity))
      return 'item count';
    return v.map((x) => invalid(x, schema.items ?? {})).find(Boolean) ?? null;
  }
  if (type === 'object' && schema.properties) {
    const missing = (schema.required ?? []).find((k) => !(k in v));
    if (missing) return `missing ${missing}`;
    for (const [k, x] of Object.entries(v)) {
      if (!schema.properties[k]) return `undeclared ${k}`;
      const why = invalid(x, schema.properties[k]);
      if (why) return why;
    }
  }
  return null;
}

/** The value the CLI's full-schema call gives for `schema` as generate() wraps it. */
function nativeValue(text, schema) {
  const { tool, read } = schemaTool(schema);
  const flags = ['--constrained', '--require-call', '--full-schema', '--max-tokens', '96'];
  const r = nativeRun(MODEL, text, JSON.stringify([tool]), flags);
  assert.equal(r.function_calls.length, 1, JSON.stringify(r));
  return read(r.function_calls[0].arguments);
}

before(async () => {
  needle = await Needle.load(new Uint8Array(readFileSync(MODEL)));
});
after(() => needle.dispose());

test('generate(): the value of the CLI full-schema call, valid against the schema (object, array, pattern)', async () => {
  for (const [text, schema] of [
    ['Dim the bedroom lights to 30 percent', LIGHTS],
    ['Turn on the lights in the kitchen and the study', ROOMS],
    ['Book a flight to JFK for two people', FLIGHT],
  ]) {
    const value = await needle.generate(text, { schema, maxTokens: 96 });
    assert.equal(invalid(value, schema), null, `${text}: ${JSON.stringify(value)}`);
    assert.deepEqual(value, nativeValue(text, schema), text);
  }
});

test('extract({fullSchema}) takes any JSON Schema, a bare array included', async () => {
  const text = 'Turn on the lights in the kitchen and the study';
  const { tool, read } = schemaTool(ROOMS, 'extract');
  const flags = ['--constrained', '--full-schema', '--max-tokens', '96'];
  const cli = nativeRun(MODEL, text, JSON.stringify([tool]), flags);
  const record = await needle.extract(text, ROOMS, {
    fullSchema: true,
    autoDate: false,
    strict: false,
    maxTokens: 96,
  });
  assert.deepEqual(
    record,
    cli.function_calls.length ? read(cli.function_calls[0].arguments) : null,
  );
});

test('response_format json_schema / json_object: JSON content, the generate() value', async () => {
  const text = 'Dim the bedroom lights to 30 percent';
  const messages = [{ role: 'user', content: text }];
  const r = await needle.chat.completions.create({
    messages,
    max_tokens: 96,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'control_lights', schema: LIGHTS },
    },
  });
  const { message, finish_reason } = r.choices[0];
  assert.equal(finish_reason, 'stop');
  assert.equal(message.tool_calls, undefined);
  assert.deepEqual(
    JSON.parse(message.content),
    await needle.generate(text, { schema: LIGHTS, maxTokens: 96 }),
  );
  // Streamed: the chunks' content adds up to the same JSON.
  let streamed = '';
  const chunks = await needle.chat.completions.create({
    messages,
    max_tokens: 96,
    stream: true,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'control_lights', schema: LIGHTS },
    },
  });
  for await (const c of chunks) streamed += c.choices[0]?.delta.content ?? '';
  assert.deepEqual(JSON.parse(streamed), JSON.parse(message.content));
  const any = await needle.chat.completions.create({
    messages,
    max_tokens: 96,
    response_format: { type: 'json_object' },
  });
  const object = JSON.parse(any.choices[0].message.content);
  assert.equal(typeof object, 'object');
  assert.ok(object && !Array.isArray(object));
});

test('a schema keyword the matcher cannot hold is a typed error, not ignored', async () => {
  for (const schema of [
    { type: 'object', properties: { a: { anyOf: [{ type: 'number' }, { type: 'integer' }] } } },
    { type: 'number', multipleOf: 0.5 },
    { type: 'string', pattern: '(?=x)y' },
    { type: 'string', format: 'hostname', pattern: '^[a-z]+$' },
    { type: 'string', minLength: 10, maxLength: 2 },
  ]) {
    await assert.rejects(
      needle.generate('x', { schema }),
      { code: 'unsupported' },
      JSON.stringify(schema),
    );
  }
  await assert.rejects(
    needle.chat.completions.create({
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { $ref: '#/x' } } },
    }),
    { code: 'unsupported' },
  );
});

test('OpenAI fields: logprobs, penalties and n > 1 are refused; unknown fields are logged; top_k is honoured', async () => {
  const warned = [];
  const logged = await Needle.load(new Uint8Array(readFileSync(MODEL)), {
    logger: { warn: (m) => warned.push(m) },
  });
  try {
    const base = {
      messages: [{ role: 'user', content: 'Set the thermostat to 22 degrees' }],
      max_tokens: 48,
    };
    for (const extra of [
      { logprobs: true },
      { top_logprobs: 2 },
      { frequency_penalty: 0.5 },
      { presence_penalty: 1 },
      { n: 2 },
      { logit_bias: { 5: 1 } },
    ]) {
      await assert.rejects(
        logged.chat.completions.create({ ...base, ...extra }),
        { code: 'unsupported' },
        JSON.stringify(extra),
      );
    }
    // No-op values of refused fields are no request at all.
    const greedy = await logged.chat.completions.create({
      ...base,
      logprobs: false,
      frequency_penalty: 0,
      n: 1,
      user: 'u1',
    });
    assert.deepEqual(warned, ['chat.completions.create: user is not used by Needle']);
    // top_k 1 keeps only the best token: sampling at temperature 1 is then the greedy answer.
    const topK = await logged.chat.completions.create({
      ...base,
      temperature: 1,
      seed: 7,
      top_k: 1,
    });
    assert.equal(
      topK.choices[0].message.tool_calls?.[0]?.function.arguments,
      greedy.choices[0].message.tool_calls?.[0]?.function.arguments,
    );
  } finally {
    logged.dispose();
  }
});

/** A needle whose engine writes `pieces`, one token each, and stops early when aborted. */
function scripted(pieces) {
  const result = (text, stop_reason) => ({
    text,
    stop_reason,
    function_calls: [],
    usage: { prompt_tokens: 3, completion_tokens: text.length },
  });
  const fake = {
    generated: 0,
    async complete(_query, { signal, onToken }) {
      let text = '';
      for (const piece of pieces) {
        if (signal && signal.aborted)
          throw Object.assign(new Error('aborted'), {
            code: 'aborted',
            result: result(text, 'aborted'),
          });
        fake.generated++;
        text += piece;
        onToken?.({ token: 0, text: piece });
        await null;
      }
      return result(text, 'eos');
    },
    // The package's own stream() over this complete().
    stream: Needle.prototype.stream,
  };
  return fake;
}

test('stop sequences end the content before the first of them, and the generation there', async () => {
  const pieces = ['Hello', ' there', ', END', ' and more', ' text'];
  const body = { messages: [{ role: 'user', content: 'hi' }], stop: ['END', 'zzz'] };
  const fake = scripted(pieces);
  const r = await new Completions(fake, { warn() {} }).create(body);
  assert.equal(r.choices[0].message.content, 'Hello there, ');
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.ok(fake.generated < pieces.length, 'the generation stopped early');
  let content = '';
  let finish = null;
  for await (const c of await new Completions(scripted(pieces), { warn() {} }).create({
    ...body,
    stream: true,
  })) {
    content += c.choices[0]?.delta.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(content, 'Hello there, ');
  assert.equal(finish, 'stop');
  await assert.rejects(
    new Completions(fake, { warn() {} }).create({ ...body, stop: ['a', 'b', 'c', 'd', 'e'] }),
    { code: 'invalid_argument' },
  );
});
