// The turns of a conversation as a chat log: the user's text, the model's reasoning and calls (or
// "no tool fits this request" for a refusal), and the tool results sent back.
import { callCards } from './calls.js';

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function reasoningBox(text) {
  const box = el('details', 'reasoning');
  box.open = false;
  box.append(el('summary', null, 'Thinking'), el('div', 'reasoning-text', text));
  return box;
}

/** One result card: a value, or an `{error}` in red. */
function resultCard(call, result) {
  const failed =
    result &&
    typeof result === 'object' &&
    !Array.isArray(result) &&
    'error' in result &&
    Object.keys(result).length === 1;
  const card = el('article', `result ${failed ? 'failed' : 'ok'}`);
  card.append(el('h3', null, `${failed ? '✗' : '✓'} ${call ? call.name : 'result'}`));
  card.append(el('pre', null, failed ? String(result.error) : JSON.stringify(result, null, 2)));
  return card;
}

/**
 * A list item per turn of `history` (`convo.history`). `details.get(i)`: the full result of the
 * assistant turn at index i (confidence, validation), when the page has it. `stoppedAtLimit`: the
 * last turn's calls were not run (the agent loop reached its step limit).
 */
export function turnItems(history, details = new Map(), { stoppedAtLimit = false } = {}) {
  const items = [];
  let lastCalls = [];
  history.forEach((turn, i) => {
    const li = el('li', `turn ${turn.role}`);
    li.dataset.role = turn.role;
    if (turn.role === 'user') {
      li.append(el('div', 'bubble', turn.content));
    } else if (turn.role === 'assistant') {
      const r = details.get(i);
      if (turn.reasoning) li.append(reasoningBox(turn.reasoning));
      const calls = turn.function_calls || [];
      lastCalls = calls;
      if (calls.length) {
        const list = el('div', 'calls');
        list.append(...callCards(calls));
        li.append(list);
        if (stoppedAtLimit && i === history.length - 1)
          li.append(el('p', 'muted', 'Not run: the step limit was reached.'));
      } else if (i > 0 && history[i - 1].role === 'tool') {
        // No further calls after the results: the agent loop is done.
        li.append(el('p', 'done', 'Done: no further calls.'));
      } else {
        li.append(el('p', 'refusal', 'No tool fits this request.'));
      }
      const meta = [];
      if (r && typeof r.confidence === 'number') meta.push(`confidence ${r.confidence.toFixed(3)}`);
      if (r && r.usage)
        meta.push(
          `${r.usage.prompt_tokens} prompt tokens (${r.usage.cached_tokens ?? 0} reused), ${r.timings.prefill_ms.toFixed(0)} ms prefill`,
        );
      const ungrounded = (r && r.validation && r.validation.ungrounded) || [];
      if (ungrounded.length)
        li.append(el('p', 'error', `Not grounded in the request: ${ungrounded.join(', ')}`));
      if (meta.length) li.append(el('p', 'muted', meta.join(' · ')));
    } else {
      let results;
      try {
        results = JSON.parse(turn.content);
      } catch {
        results = [turn.content];
      }
      const list = el('div', 'results');
      list.append(
        ...(Array.isArray(results) ? results : [results]).map((res, k) =>
          resultCard(lastCalls[k], res),
        ),
      );
      li.append(list);
    }
    items.push(li);
  });
  return items;
}

/** The item shown while the model writes: its streamed text so far. */
export function pendingItem() {
  const li = el('li', 'turn assistant pending');
  const text = el('div', 'streaming muted', '…');
  li.append(text);
  return { li, update: (raw) => (text.textContent = raw || '…') };
}

/** A chat view's running state: `data-state` on the view, its Run/Send and Stop buttons, its status line. */
export function stateSetter(view, { run, stop, status }) {
  return (state, message) => {
    view.dataset.state = state;
    run.disabled = state === 'running';
    stop.disabled = state !== 'running';
    if (message !== undefined) status.textContent = message;
  };
}
