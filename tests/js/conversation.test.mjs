// needle.conversation() on the default model: turns kept as data and sent as history, reset,
// stateless, upstream's warning after 4 queries without reset, aborted turns left out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Needle } from '../../pkg/index.js';
import { defaultModel } from './helpers.mjs';

const MODEL = defaultModel();
const ENV = JSON.parse(readFileSync(new URL('../../www/presets/smart_home.json', import.meta.url), 'utf8'));
const OPTS = { tools: ENV.tools, system: ENV.system, autoDate: false, constrained: true, maxTokens: 48 };
// complete() refuses options it does not know (autoDate is a conversation's).
const { autoDate: _, ...ONE_SHOT } = OPTS;
let needle;

before(async () => {
  needle = await Needle.load(new Uint8Array(readFileSync(MODEL)));
});
after(() => needle.dispose());

/** Prompt and completion token counts (cached_tokens depends on what the engine held before). */
const counts = (u) => [u.prompt_tokens, u.completion_tokens];

/** A logger that keeps what it is told. */
const collector = () => {
  const warnings = [];
  return { warnings, warn: (m) => warnings.push(m) };
};

test('turns are kept as data, each answer sees the turns before it, reset() forgets them', async () => {
  const convo = needle.conversation(OPTS);
  const first = await convo.send('Turn on the kitchen lights');
  const oneShot = await needle.complete('Turn on the kitchen lights', ONE_SHOT);
  assert.deepEqual([first.tokens, counts(first.usage)], [oneShot.tokens, counts(oneShot.usage)], 'a first turn is a one-shot request');
  const second = await convo.send('Close the bedroom blinds');
  assert.deepEqual(
    convo.history.map((t) => t.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
  const [u1, a1, u2, a2] = convo.history;
  assert.equal(u1.content, 'Turn on the kitchen lights');
  assert.equal(a1.content, first.text);
  assert.deepEqual(a1.function_calls, first.function_calls);
  assert.equal(u2.content, 'Close the bedroom blinds');
  assert.deepEqual(a2.function_calls, second.function_calls);
  const alone = await needle.complete('Close the bedroom blinds', ONE_SHOT);
  assert.ok(second.usage.prompt_tokens > alone.usage.prompt_tokens + first.usage.completion_tokens, 'the first turn is in the prompt');
  const held = first.usage.prompt_tokens + first.usage.completion_tokens;
  assert.ok(second.usage.cached_tokens >= held - 1, `the engine reused the first turn (${second.usage.cached_tokens} of ${held} tokens)`);

  convo.history.push({ role: 'user', content: 'tampered' });
  assert.equal(convo.history.length, 4, 'history is a copy');
  convo.reset();
  assert.deepEqual(convo.history, []);
  const again = await convo.send('Close the bedroom blinds');
  assert.deepEqual(counts(again.usage), counts(alone.usage), 'after reset a turn starts a fresh conversation');
});

test('upstream warns once, through the logger, at the fifth query without reset; stateless never accumulates', async () => {
  const log = collector();
  const convo = needle.conversation({ ...OPTS, maxTokens: 8, logger: log });
  for (let i = 0; i < 4; i++) await convo.send('Turn on the kitchen lights');
  assert.equal(log.warnings.length, 0);
  await convo.send('Turn on the kitchen lights');
  assert.equal(log.warnings.length, 1);
  assert.match(log.warnings[0], /4 queries .* without reset\(\)/);
  await convo.send('Turn on the kitchen lights');
  assert.equal(log.warnings.length, 1, 'once');

  const quiet = collector();
  const stateless = needle.conversation({ ...OPTS, maxTokens: 8, stateless: true, logger: quiet });
  const one = await stateless.send('Turn on the kitchen lights');
  for (let i = 0; i < 5; i++) assert.deepEqual((await stateless.send('Turn on the kitchen lights')).tokens, one.tokens);
  assert.equal(stateless.history.length, 2);
  assert.equal(quiet.warnings.length, 0);

  // A Logger may leave warn out (its methods are optional, as for load's logger).
  const errorsOnly = needle.conversation({ ...OPTS, maxTokens: 8, logger: { error() {} } });
  for (let i = 0; i < 5; i++) await errorsOnly.send('Turn on the kitchen lights');
});

test('an aborted turn does not join the history; overlapping sends go in order', async () => {
  const convo = needle.conversation(OPTS);
  const stop = new AbortController();
  await assert.rejects(convo.send('Turn on the kitchen lights', { signal: stop.signal, onToken: () => stop.abort() }), { name: 'AbortError' });
  assert.deepEqual(convo.history, []);
  const [a, b] = await Promise.all([convo.send('Turn on the kitchen lights'), convo.send('Close the bedroom blinds')]);
  assert.deepEqual(convo.history.map((t) => t.content), ['Turn on the kitchen lights', a.text, 'Close the bedroom blinds', b.text]);
});
