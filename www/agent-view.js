// The Agent tab: `needle.run()` on the smart-home environment, whose tools are real functions
// that change a small house (house.js), so each call visibly takes effect.
import { createHouse, showHouse } from './house.js';
import { turnItems, pendingItem, stateSetter } from './turns.js';
import { registerHouseTools } from './webmcp-house.js';

const $ = (id) => document.getElementById(id);

export const AGENT_EXAMPLES = [
  'Turn on the kitchen lights',
  'Dim the bedroom lights to 30 percent',
  'Close the living room blinds',
  'Set the thermostat to 22 degrees',
  'Turn on the study fan on high',
  'Play some jazz',
];

/**
 * The options every agent run uses: the environment's system prompt and tools, constrained
 * decoding, no date fact (no tool here takes a date, and the prompt stays the CLI's).
 */
export const AGENT_OPTIONS = Object.freeze({ constrained: true, autoDate: false, stateless: true });

export async function initAgentView({ getNeedle }) {
  const view = $('view-agent');
  const log = $('agent-log');
  const house = createHouse();
  showHouse($('house'), house);
  const env = await fetch(new URL('./presets/smart_home.json', import.meta.url)).then((r) =>
    r.json(),
  );
  view.dataset.webmcpTools = String(registerHouseTools(env, house.functions));
  const convo = { current: null, needle: null };
  let running = null;

  for (const text of AGENT_EXAMPLES) {
    const chip = document.createElement('button');
    chip.type = 'button';
    chip.className = 'small chip';
    chip.textContent = text;
    chip.addEventListener('click', () => {
      $('agent-input').value = text;
      $('agent-form').requestSubmit();
    });
    $('agent-examples').append(chip);
  }

  const setState = stateSetter(view, {
    run: $('agent-run'),
    stop: $('agent-stop'),
    status: $('agent-status'),
  });

  /** One conversation per model, made with the environment and the house's functions. */
  const conversation = (needle) => {
    if (convo.needle !== needle) {
      const { stateless, ...options } = AGENT_OPTIONS;
      convo.current = needle.conversation({
        tools: [...env.tools, house.functions],
        system: env.system,
        stateless,
        ...options,
      });
      convo.needle = needle;
    }
    return convo.current;
  };

  $('agent-stop').addEventListener('click', () => running && running.abort());
  $('agent-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const needle = getNeedle();
    const query = $('agent-input').value.trim();
    if (!needle || !query || running) return;
    const c = conversation(needle);
    const run = document.createElement('ol');
    run.className = 'log-run';
    const pending = pendingItem();
    run.append(...turnItems([{ role: 'user', content: query }]), pending.li);
    log.prepend(run);
    running = new AbortController();
    setState('running', 'Running…');
    let raw = '';
    let steps = 0;
    try {
      const maxSteps = Number($('agent-steps').value) || 1;
      const r = await c.run(query, {
        maxSteps,
        signal: running.signal,
        onToken: (t) => pending.update((raw += t.text)),
        onStep: () => {
          steps += 1;
          raw = '';
        },
      });
      const details = new Map();
      details.set(c.history.length - 1, r);
      const stoppedAtLimit = r.type === 'call' && r.function_calls.length > 0;
      run.replaceChildren(...turnItems(c.history, details, { stoppedAtLimit }));
      view.dataset.steps = String(r.steps.length);
      const made = `${r.results.length} call${r.results.length === 1 ? '' : 's'} run in ${r.steps.length} step${r.steps.length === 1 ? '' : 's'}`;
      setState('done', r.steps.length ? `Done: ${made}.` : 'No tool fits this request.');
    } catch (e) {
      pending.li.remove();
      if (e.name === 'AbortError') setState('aborted', `Stopped after ${steps} step(s).`);
      else setState('error', `Error: ${e.message} (${e.code})`);
    } finally {
      running = null;
    }
  });
  setState('idle', '');
}
