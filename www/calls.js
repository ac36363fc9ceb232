// One card per function call (name, then arguments as indented JSON): the demo page and the
// browser extension show calls alike.
export function callCards(calls) {
  return (calls || []).map((call) => {
    const card = document.createElement('article');
    card.className = 'call';
    const name = document.createElement('h3');
    name.textContent = call.name;
    const args = document.createElement('pre');
    args.textContent = JSON.stringify(call.arguments ?? {}, null, 2);
    card.append(name, args);
    return card;
  });
}

/**
 * Whether a result is the model declining: it answered with nothing but an empty call list
 * (`<tool_call>[]</tool_call>`). `answer` is the text outside the thinking section.
 */
export function isRefusal(result, answer) {
  const calls = result.function_calls;
  if (!Array.isArray(calls) || calls.length || result.parse_error) return false;
  const empty = /<tool_call>\s*\[\s*\]\s*<\/tool_call>/g;
  return answer.includes('<tool_call>') && answer.replace(empty, '').trim() === '';
}

/**
 * The answer the Ask tab shows above the call cards: the text outside the thinking section less
 * the tool-call markup, which the cards (or the refusal's line) show. Markup that did not parse
 * stays, beside its `parse_error`.
 */
export function answerText(result, answer) {
  if (result.parse_error) return answer.trim();
  return answer.replace(/<tool_call>[\s\S]*?(<\/tool_call>|$)/g, '').trim();
}
