// Conversations: turns that stay in context until reset, as upstream's stateful `Needle` agent.
//
//   const convo = needle.conversation({ tools, system });
//   await convo.send('Turn on the kitchen light');
//   await convo.send('and dim it to 30 percent'); // sees the first turn
//   convo.reset();
//
// Every request carries the whole history; the engine keeps the KV cache of the longest prefix it
// shares with the previous request, so a new turn only prefills itself. Nothing is held in the
// engine between requests that JS does not also hold, so conversations on one model may
// interleave (each switch costs a longer prefill, never a wrong answer).
import { NeedleError } from './protocol.js';
import { splitTools } from './tools.js';
import { runConversation } from './agent.js';

/** Upstream warns after this many queries without a reset (`UNRESET_TURNS`). */
export const UNRESET_TURNS = 4;

/**
 * Whether conversations, the agent loop and extraction add the date fact unless told. Upstream's
 * do; here it is off, as for `complete()`, `chat.completions` and the CLI: on the bundled model's
 * acceptance suite (192 cases, six environments) the date fact costs 6 right answers greedy
 * (163 -> 157 with README.md's fixed date, 154 with 2026-12-07's): the model was trained without
 * it. Models trained with it (upstream's) want `autoDate: true`.
 */
export const AUTO_DATE_DEFAULT = false;

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** The local date as upstream's date fact writes it (`%Y-%m-%d %a %H:%M`), without the key. */
export function dateFact(now = new Date()) {
  const p = (n) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())} ${DAYS[now.getDay()]} ${p(now.getHours())}:${p(now.getMinutes())}`;
}

/**
 * Tool results as the text of a tool-result turn: a JSON list written as upstream's agent writes
 * it (Python's `json.dumps`: `", "` and `": "` separators, non-ASCII as `\uXXXX`), so the model
 * sees what upstream's would. Values JSON cannot hold become strings, as upstream's `default`.
 */
export function toolResultsText(results) {
  const replacer = (_key, value) =>
    typeof value === 'bigint' ? String(value) : value === undefined ? null : value;
  const list = results.map((r) => (r === undefined ? null : r));
  const compact = JSON.stringify(list, replacer);
  return pythonSpacing(compact).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Compact JSON with `, ` and `: ` between items, leaving string contents alone. */
function pythonSpacing(json) {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    out += c;
    if (inString) {
      if (c === '\\') out += json[++i];
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === ',' || c === ':') out += ' ';
  }
  return out;
}

/** A conversation with one model: create with `needle.conversation(options)`. */
export class Conversation {
  #needle;
  #tools; // schemas, as given (their order is the prompt's)
  #functions; // name -> function, for run()
  #system;
  #autoDate;
  #stateless;
  #logger;
  #defaults; // other complete() options for every turn
  #turns = [];
  #queries = 0;
  #warned = false;
  #epoch = 0; // bumped by reset(): a turn in flight across a reset does not join the new history
  #queue = Promise.resolve();

  constructor(needle, options = {}) {
    const {
      tools,
      system,
      autoDate = AUTO_DATE_DEFAULT,
      stateless = false,
      logger,
      ...defaults
    } = options;
    const split = splitTools(tools);
    this.#needle = needle;
    this.#tools = split.schemas;
    this.#functions = split.functions;
    this.#system = system ?? null;
    this.#autoDate = Boolean(autoDate);
    this.#stateless = Boolean(stateless);
    this.#logger = logger ?? console;
    this.#defaults = defaults;
  }

  /** The turns so far, oldest first: `{role: 'user' | 'assistant' | 'tool', content, ...}` (copies). */
  get history() {
    return this.#turns.map((t) => structuredClone(t));
  }

  /** The tools' schemas, as the model sees them. */
  get tools() {
    return this.#tools;
  }

  /** The registered functions by tool name (for the agent loop). */
  get functions() {
    return this.#functions;
  }

  /** The system text as given (the date fact is added per request when `autoDate`). */
  get system() {
    return this.#system;
  }

  /** Forgets every turn; the next send starts a fresh conversation. */
  reset() {
    this.#turns = [];
    this.#queries = 0;
    this.#warned = false;
    this.#epoch += 1;
  }

  /**
   * Sends a user turn and resolves to the model's answer (the result `complete()` gives). The turn
   * and the answer join the history only once the answer is complete: a failed or aborted send
   * leaves the conversation as it was.
   */
  send(text, options = {}) {
    if (this.#stateless) this.reset();
    this.#countQuery();
    return this.#turn({ role: 'user', content: String(text) }, options);
  }

  /**
   * The agent loop in this conversation: `send(query)`, then the calls executed on the tools'
   * functions and their results sent back, until the model answers without calls (see agent.js).
   * options: { maxSteps = 8, strict = true, signal, onStep({function_calls, results}), ...send options }.
   */
  run(query, options = {}) {
    return runConversation(this, query, options);
  }

  /** Sends a tool-result turn: the JSON list of `results` (the agent loop's next step). */
  sendResults(results, options = {}) {
    if (!Array.isArray(results))
      throw new NeedleError('invalid_argument', 'results must be an array');
    return this.#turn({ role: 'tool', content: toolResultsText(results) }, options);
  }

  // Turns go one at a time, each after the previous has joined the history.
  #turn(turn, options) {
    const epoch = this.#epoch;
    const run = this.#queue.then(() => this.#complete(turn, options, epoch));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #complete(turn, options, epoch) {
    // A reset() while this turn waited: it belongs to the new conversation.
    const history = epoch === this.#epoch ? this.#turns : [];
    const { tools: _tools, system: _system, ...rest } = options;
    // The engine renders `turns` and then the query as a new user turn; a tool-result turn goes
    // in `turns` with an empty query, so the model answers it.
    const earlier = history.map(({ role, content }) => ({ role, content }));
    const user = turn.role === 'user';
    const result = await this.#needle.complete(user ? turn.content : '', {
      ...this.#defaults,
      ...rest,
      tools: this.#tools,
      system: this.#system ?? undefined,
      turns: user ? earlier : [...earlier, { role: turn.role, content: turn.content }],
      date: this.#autoDate ? dateFact() : undefined,
    });
    if (epoch === this.#epoch) {
      const answer = {
        role: 'assistant',
        content: result.text,
        function_calls: result.function_calls,
        reasoning: result.reasoning,
      };
      this.#turns = [...history, turn, answer];
    }
    return result;
  }

  #countQuery() {
    this.#queries += 1;
    if (this.#queries > UNRESET_TURNS && !this.#warned) {
      this.#warned = true;
      // A Logger's methods are all optional (index.d.ts): one without warn hears nothing.
      this.#logger.warn?.(
        `needle-web: ${UNRESET_TURNS} queries in this conversation without reset(): every turn stays in context, so ` +
          'unrelated queries lose accuracy and confidence. Call reset() between independent queries, or create it ' +
          'with stateless: true.',
      );
    }
  }
}
