// needle.extract() on the default model: the record is the arguments of the CLI's constrained call,
// null when the model declines, a typed `ungrounded` error for an invented number.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { defaultModel, nativeRun } from './helpers.mjs';

const MODEL = defaultModel();
const ENV = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
const THERMOSTAT = ENV.tools.find((t) => t.name === 'set_thermostat');
// No date fact, so the prompt is the CLI's.
const OPTS = { autoDate: false, maxTokens: 64 };
let needle;

const native = (text) => nativeRun(MODEL, text, JSON.stringify([THERMOSTAT]), ['--constrained', '--max-tokens', '64']);

before(async () => {
  needle = await Needle.load(new Uint8Array(readFileSync(MODEL)));
});
after(() => needle.dispose());

test('the record is the arguments of the call the CLI makes with the schema as the only tool (constrained)', async () => {
  const text = 'Set the thermostat to 22 degrees';
  const cli = native(text);
  assert.equal(cli.function_calls.length, 1);
  assert.deepEqual(await needle.extract(text, THERMOSTAT, OPTS), cli.function_calls[0].arguments);
  // A bare JSON Schema is wrapped as a tool named by its title: the same prompt, the same record.
  const bare = { title: 'set_thermostat', ...THERMOSTAT.parameters };
  const wrapped = { name: 'set_thermostat', parameters: bare };
  const cliBare = nativeRun(MODEL, text, JSON.stringify([wrapped]), ['--constrained', '--max-tokens', '64']);
  assert.deepEqual(await needle.extract(text, bare, OPTS), cliBare.function_calls.length ? cliBare.function_calls[0].arguments : null);
});

test('a declined extraction is null', async () => {
  const text = 'Play some jazz';
  assert.deepEqual(native(text).function_calls, []);
  assert.equal(await needle.extract(text, THERMOSTAT, OPTS), null);
});

test('strict: a number the text never wrote rejects with code ungrounded and its path; strict: false returns it', async () => {
  const text = 'Set the temperature to twenty two'; // in words: the model's 22 is not in the text
  const cli = native(text);
  assert.deepEqual(cli.validation.ungrounded, ['set_thermostat.temperature']);
  await assert.rejects(needle.extract(text, THERMOSTAT, OPTS), (e) => {
    assert.equal(e.name, 'NeedleError');
    assert.equal(e.code, 'ungrounded');
    assert.deepEqual(e.paths, ['temperature']);
    assert.deepEqual(e.result.function_calls, cli.function_calls);
    return true;
  });
  assert.deepEqual(await needle.extract(text, THERMOSTAT, { ...OPTS, strict: false }), cli.function_calls[0].arguments);
});

test('bad schemas are typed errors', async () => {
  await assert.rejects(needle.extract('x', '{nope', OPTS), { code: 'bad_json' });
  await assert.rejects(needle.extract('x', [THERMOSTAT], OPTS), { code: 'invalid_argument' });
});
