// The Conversation tab: turns with the tools and settings of the editor, every turn kept in
// context until "New conversation" (or a change of tools or system prompt).
import { turnItems, pendingItem, stateSetter } from './turns.js';

const $ = (id) => document.getElementById(id);

/** `getNeedle()`: the loaded model or null; `getOptions()`: the editor's complete() options. */
export function initConversationView({ getNeedle, getOptions }) {
  const view = $('view-convo');
  const log = $('convo-log');
  let convo = null;
  let made = ''; // the tools and system the conversation was made with
  const details = new Map(); // history index -> full result
  let running = null; // AbortController of the turn in flight
  const setState = stateSetter(view, {
    run: $('convo-send'),
    stop: $('convo-stop'),
    status: $('convo-status'),
  });
  const notice = (text) => {
    $('convo-notice').hidden = !text;
    $('convo-notice').textContent = text || '';
  };
  const draw = () => log.replaceChildren(...(convo ? turnItems(convo.history, details) : []));
  const reset = () => {
    convo = null;
    details.clear();
    notice('');
    draw();
    setState('idle', '');
  };

  $('convo-reset').addEventListener('click', () => {
    if (running) running.abort();
    reset();
  });
  $('convo-stop').addEventListener('click', () => running && running.abort());
  $('convo-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const needle = getNeedle();
    const text = $('convo-input').value.trim();
    if (!needle || !text || view.dataset.state === 'running') return;
    const { tools, system, ...options } = getOptions();
    if (tools === null) return setState('error', 'Fix the tools JSON first.');
    const autoDate = $('convo-date').checked;
    const setup = `${tools}\n${system}\n${autoDate}`;
    if (convo && made !== setup) {
      reset();
      notice('The tools, system prompt or date setting changed: a new conversation started.');
    }
    if (!convo) {
      convo = needle.conversation({ tools, system, autoDate, logger: { warn: notice } });
      made = setup;
    }
    const before = convo.history.length;
    const pending = pendingItem();
    const user = turnItems([{ role: 'user', content: text }]);
    log.append(...user, pending.li);
    setState('running', 'Generating…');
    let raw = '';
    running = new AbortController();
    try {
      const result = await convo.send(text, {
        ...options,
        signal: running.signal,
        onToken: (t) => pending.update((raw += t.text)),
      });
      details.set(before + 1, result);
      $('convo-input').value = '';
      setState(
        'done',
        `Turn ${convo.history.length / 2} · ${result.usage.prompt_tokens} prompt tokens`,
      );
    } catch (e) {
      // A stopped or failed turn does not join the conversation.
      if (e.name === 'AbortError')
        setState('aborted', 'Stopped: that turn was left out of the conversation.');
      else setState('error', `Error: ${e.message} (${e.code})`);
    } finally {
      running = null;
    }
    draw();
  });
  reset();
}
