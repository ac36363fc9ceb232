// The demo's Ask tab (www/app.js) shows a result's calls as cards; the answer text above them is
// what the model wrote outside its reasoning and outside the tool-call markup the cards show.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { answerText } from '../../www/calls.js';

const CALL = '<tool_call>[{"name":"control_lights","arguments":{"room":"kitchen"}}]</tool_call>';
const calls = [{ name: 'control_lights', arguments: { room: 'kitchen' } }];

test('the tool-call markup the cards show is not printed above them', () => {
  assert.equal(answerText({ function_calls: calls }, `${CALL}`), '');
  assert.equal(answerText({ function_calls: calls }, `\n  ${CALL}\n`), '');
  assert.equal(answerText({ function_calls: [] }, '<tool_call>[]</tool_call>'), '', 'a refusal');
  // Text the model wrote around the calls stays.
  assert.equal(answerText({ function_calls: calls }, `Sure. ${CALL} Done.`), 'Sure.  Done.');
  // A call cut off by max_tokens has no closing marker.
  assert.equal(answerText({ function_calls: [] }, '<tool_call>[{"name":"contr'), '');
});

test('markup that did not parse stays beside its parse_error', () => {
  const broken = '<tool_call>[{"name":}]</tool_call>';
  assert.equal(answerText({ function_calls: [], parse_error: 'bad JSON' }, broken), broken);
});
