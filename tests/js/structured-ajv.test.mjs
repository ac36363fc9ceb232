// Structured output always validates: random schemas from the vocabulary the engine holds, and a
// corpus of schemas as zod 4 / OpenAI users write them, generated on the default model at random
// seeds and temperatures; every value is checked by ajv with ajv-formats in full mode (an
// independent validator), and every schema must be accepted. NEEDLE_PROPERTY_SEED replays a run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import { Needle } from '../../pkg/index.js';
import { defaultModel } from './helpers.mjs';

const SEED = Number(process.env.NEEDLE_PROPERTY_SEED ?? 20261204);
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv, { mode: 'full' });

/** mulberry32: a small seeded generator, so a failure replays. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random schema from the supported vocabulary (depth-limited). */
function randomSchema(r, depth = 0) {
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const leaf = () =>
    pick([
      () => ({ type: 'string', maxLength: 1 + Math.floor(r() * 12) }),
      () => ({ type: 'string', minLength: 2, maxLength: 6 }),
      () => ({ type: 'string', format: pick(['date', 'time', 'date-time', 'email', 'uuid', 'ipv4']) }),
      () => ({ type: 'string', pattern: pick(['^[A-Z]{3}$', '^[a-z]+-\\d{2}$', '^(yes|no)$']) }),
      () => ({ type: 'string', format: 'email', pattern: '^[a-z]+@[a-z]+\\.[a-z]{2,}$' }),
      () => ({ enum: pick([['red', 'green'], [1, 2, 3], ['a', null, true]]) }),
      () => ({ const: pick(['fixed', 7, false]) }),
      () => ({ type: 'integer', minimum: -50, maximum: 50 + Math.floor(r() * 1000) }),
      () => ({ type: 'integer', multipleOf: pick([2, 5, 10]), minimum: 0, maximum: 200 }),
      () => ({ type: 'integer' }),
      () => ({ type: 'number' }),
      () => ({ type: 'number', exclusiveMinimum: 0, maximum: 1 }),
      () => ({ type: 'boolean' }),
      () => ({ type: ['string', 'null'], maxLength: 8 }),
      () => ({ anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] }),
      () => ({ type: 'array', items: { enum: ['a', 'b', 'c', 'd'] }, uniqueItems: true }),
      () => ({ type: 'array', items: { type: 'integer', minimum: 0, maximum: 9 }, maxItems: 3 }),
    ])();
  if (depth >= 2 || r() < 0.6) return leaf();
  const properties = {};
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) properties[`k${i}`] = randomSchema(r, depth + 1);
  const required = Object.keys(properties).filter(() => r() < 0.6);
  return { type: 'object', properties, required, additionalProperties: false };
}

const ADDRESS = {
  type: 'object',
  properties: { street: { type: 'string' }, zip: { type: 'string', pattern: '^\\d{5}$' } },
  required: ['street', 'zip'],
  additionalProperties: false,
};
/** Schemas as zod 4's toJSONSchema and OpenAI structured outputs users write them. */
const CORPUS = [
  [
    'Sign up jane.doe@example.com for the newsletter',
    {
      type: 'object',
      properties: {
        email: {
          type: 'string',
          format: 'email',
          pattern:
            "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$",
        },
      },
      required: ['email'],
      additionalProperties: false,
    },
  ],
  [
    'Dentist appointment on March 3rd 2027 at 9:30 for an hour',
    {
      type: 'object',
      properties: {
        title: { type: 'string', maxLength: 40 },
        date: { type: 'string', format: 'date' },
        start: { type: 'string', format: 'date-time' },
        minutes: { type: 'integer', minimum: 5, maximum: 480, multipleOf: 5 },
        location: { type: ['string', 'null'] },
      },
      required: ['title', 'date', 'start', 'minutes', 'location'],
      additionalProperties: false,
    },
  ],
  [
    'Pay 12.50 euros to Bob, or cancel the card ending 4242',
    {
      oneOf: [
        {
          type: 'object',
          properties: {
            kind: { type: 'string', const: 'payment' },
            amount: { type: 'number', exclusiveMinimum: 0 },
            to: { type: 'string', maxLength: 20 },
          },
          required: ['kind', 'amount', 'to'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: {
            kind: { type: 'string', const: 'cancel' },
            last4: { type: 'string', pattern: '^\\d{4}$' },
          },
          required: ['kind', 'last4'],
          additionalProperties: false,
        },
      ],
    },
  ],
  [
    'Ship to 12 Elm St 40001, bill to 9 Oak Ave 40002',
    {
      $defs: { address: ADDRESS },
      type: 'object',
      properties: { ship: { $ref: '#/$defs/address' }, bill: { $ref: '#/$defs/address' } },
      required: ['ship', 'bill'],
      additionalProperties: false,
    },
  ],
  [
    'Weather in Paris and Rome in celsius',
    {
      type: 'object',
      properties: {
        cities: { type: 'array', items: { type: 'string', maxLength: 20 }, minItems: 1, maxItems: 4 },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
      },
      required: ['cities', 'unit'],
      additionalProperties: false,
    },
  ],
  [
    'Tag this note as work and urgent, id 123e4567-e89b-12d3-a456-426614174000',
    {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        tags: {
          type: 'array',
          items: { type: 'string', enum: ['work', 'home', 'urgent', 'later'] },
          uniqueItems: true,
        },
        due: { anyOf: [{ type: 'string', format: 'time' }, { type: 'null' }] },
        priority: {
          anyOf: [
            { type: 'string', const: 'low' },
            { type: 'string', const: 'high' },
            { type: 'number', const: 3 },
          ],
        },
      },
      required: ['id', 'tags', 'due', 'priority'],
      additionalProperties: false,
    },
  ],
  [
    'Turn on the desk lamp, or set the fan to speed 3',
    {
      $defs: {
        lamp: {
          type: 'object',
          properties: { device: { const: 'lamp' }, on: { type: 'boolean' } },
          required: ['device', 'on'],
          additionalProperties: false,
        },
        fan: {
          type: 'object',
          properties: { device: { const: 'fan' }, speed: { type: 'integer', minimum: 0, maximum: 5 } },
          required: ['device', 'speed'],
          additionalProperties: false,
        },
      },
      oneOf: [{ $ref: '#/$defs/lamp' }, { $ref: '#/$defs/fan' }],
    },
  ],
];

const QUERIES = [
  'Book it for tomorrow morning',
  'Log 3 glasses of water',
  'Remind me to call Ana at 5pm',
  'Set the thermostat to 21 degrees in the bedroom',
];

let needle;
before(async () => {
  needle = await Needle.load(new Uint8Array(readFileSync(defaultModel())));
});
after(() => needle?.dispose());

/** Generates for `schema` and asserts the value is accepted by ajv. */
async function holds(text, schema, options, label) {
  const value = await needle.generate(text, { schema, maxTokens: 128, ...options });
  const validate = ajv.compile(schema);
  assert.ok(
    validate(value),
    `${label}: ${JSON.stringify(value)} fails ${ajv.errorsText(validate.errors)} (schema ${JSON.stringify(schema)}, ${JSON.stringify(options)})`,
  );
}

test('random schemas from the supported vocabulary: every value validates (ajv, formats full)', async () => {
  const r = rng(SEED);
  for (let i = 0; i < 40; i++) {
    const schema = randomSchema(r);
    const options = { seed: Math.floor(r() * 1e6), temperature: [0, 0.7, 1, 1.3][i % 4] };
    await holds(QUERIES[i % QUERIES.length], schema, options, `seed ${SEED} #${i}`);
  }
});

test('schemas as zod 4 and OpenAI users write them: accepted, and every value validates', async () => {
  const r = rng(SEED + 1);
  for (const [text, schema] of CORPUS) {
    for (const temperature of [0, 1]) {
      await holds(text, schema, { seed: Math.floor(r() * 1e6), temperature }, text);
    }
  }
});
