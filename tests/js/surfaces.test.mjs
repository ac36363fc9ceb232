// The pure parts of the conversation surfaces (no model): tools split from functions, the
// tool-result turn's text, OpenAI messages as turns, the visible part of streamed text.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { splitTools, ungroundedByTool } from '../../pkg/tools.js';
import { toolResultsText, dateFact } from '../../pkg/conversation.js';
import { messagesToTurns, partialCalls, visibleText } from '../../pkg/openai.js';

const light = { name: 'set_light', description: 'A light.', parameters: { type: 'object', properties: { room: { type: 'string' } } } };
const fan = { type: 'function', function: { name: 'set_fan', parameters: { type: 'object', properties: {} } } };

test('tools: schemas keep their order and keys without fn; functions come from fn and {name: fn} maps', () => {
  const setLight = () => 1;
  const setFan = async () => 2;
  const { schemas, functions } = splitTools([{ ...light, fn: setLight }, fan, { set_fan: setFan }]);
  assert.deepEqual(schemas, [light, fan]);
  assert.equal(JSON.stringify(schemas[0]), JSON.stringify(light), 'key order kept');
  assert.equal(functions.get('set_light'), setLight);
  assert.equal(functions.get('set_fan'), setFan);
  assert.equal(splitTools('[1]').schemas, '[1]', 'JSON text passes through');
  assert.throws(() => splitTools([light, { set_fan: setFan }]), { code: 'invalid_argument', message: /set_fan has no schema/ });
  assert.throws(() => splitTools([function lonely() {}]), { code: 'invalid_argument', message: /lonely needs a schema/ });
  assert.throws(() => splitTools([{ ...light, fn: setLight }, { set_light: setLight }]), { code: 'invalid_argument' });
});

test('ungrounded names group by tool; a name without a path is its own path', () => {
  const g = ungroundedByTool({ validation: { ungrounded: ['set_light.brightness', 'set_light.when.year', 'odd'] } });
  assert.deepEqual([...g.get('set_light')], ['brightness', 'when.year']);
  assert.deepEqual([...g.get('odd')], ['odd']);
  assert.equal(ungroundedByTool({}).size, 0);
});

test('tool results are written as Python json.dumps writes them (upstream sends that text)', () => {
  // json.dumps([{"error": "unknown tool: x"}, None, {"t": "21°C, \"ok\"", "n": [1, 2.5]}, "a:b,c"])
  assert.equal(
    toolResultsText([{ error: 'unknown tool: x' }, undefined, { t: '21°C, "ok"', n: [1, 2.5] }, 'a:b,c']),
    '[{"error": "unknown tool: x"}, null, {"t": "21\\u00b0C, \\"ok\\"", "n": [1, 2.5]}, "a:b,c"]',
  );
  assert.equal(toolResultsText([{ big: 10n }, '😀']), '[{"big": "10"}, "\\ud83d\\ude00"]');
});

test('the date fact is local time in upstream\'s format', () => {
  assert.equal(dateFact(new Date(2027, 4, 3, 9, 5)), '2027-05-03 Mon 09:05');
});

test('OpenAI messages become a system text, earlier turns and the new turn', () => {
  const asked = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'set_light', arguments: '{"room":"kitchen"}' } }],
  };
  const { system, turns, last } = messagesToTurns([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Kitchen light ' }, { type: 'text', text: 'on' }] },
    asked,
    { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
    { role: 'tool', tool_call_id: 'c2', content: 'not json' },
  ]);
  assert.equal(system, 'Be brief.');
  assert.deepEqual(turns, [
    { role: 'user', content: 'Kitchen light on' },
    { role: 'assistant', content: '<tool_call>[{"name":"set_light","arguments":{"room":"kitchen"}}]</tool_call>' },
  ]);
  assert.deepEqual(last, { role: 'tool', content: '[{"ok": true}, "not json"]' });
  assert.throws(() => messagesToTurns([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'x' }]), { code: 'invalid_argument' });
  assert.throws(() => messagesToTurns([{ role: 'user', content: 'hi' }, { role: 'system', content: 'late' }, { role: 'user', content: 'x' }]), {
    code: 'invalid_argument',
  });
  assert.throws(() => messagesToTurns([]), { code: 'invalid_argument' });
});

test('the visible text leaves out reasoning and call markup, and holds back a marker being written', () => {
  assert.equal(visibleText('<think>\nhm\n</think>\n<tool_call>[]</tool_call>'), '\n');
  assert.equal(visibleText('Hello <thi'), 'Hello ');
  assert.equal(visibleText('Hello <b'), 'Hello <b');
  assert.equal(visibleText('<think>still thinking'), '');
  assert.equal(visibleText('a<tool_call>[{"name"'), 'a');
});

test('calls being written are read as far as they go: a name once complete, the arguments raw', () => {
  const text = '<think>x</think><tool_call>[{"name":"a\\"b","arguments":{"s":"}{\\"","n":[1,{"k":2}]}},{"name":"c","arguments":{"x":1';
  assert.deepEqual(partialCalls(text), [
    { name: 'a"b', args: '{"s":"}{\\"","n":[1,{"k":2}]}' },
    { name: 'c', args: '{"x":1' },
  ]);
  assert.deepEqual(partialCalls('<tool_call>[{"name":"se'), [{ name: null, args: '' }]);
  assert.deepEqual(partialCalls('<tool_call>[]</tool_call>'), []);
  assert.deepEqual(partialCalls('no calls'), []);
});
