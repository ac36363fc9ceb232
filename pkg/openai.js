// An OpenAI-compatible surface, in the shape WebLLM users already write:
//
//   const r = await needle.chat.completions.create({ messages, tools, tool_choice: 'auto' });
//   r.choices[0].message.tool_calls; // [{ id, type: 'function', function: { name, arguments: '{"room":"kitchen"}' } }]
//   messages.push(r.choices[0].message, { role: 'tool', tool_call_id, content: JSON.stringify(result) });
//
// Messages map onto a conversation: system messages are the system text, `user` and `assistant`
// messages are turns, consecutive `tool` messages are one tool-result turn (the JSON list of their
// results, as the agent loop sends). `tool_choice` maps onto constrained decoding, which is on:
// 'auto' any call or the refusal, 'required' a call (the refusal `[]` masked), `{function: {name}}`
// only that tool, called; 'none' offers no tools (only the refusal can be written).
// `response_format` ({type: 'json_schema', json_schema: {name, schema}} or {type: 'json_object'})
// makes the content a JSON value held to the schema (structured.js); `stop` ends the content
// before the first stop sequence; fields the engine cannot honour are refused or logged
// (openai-fields.js).
import { IM_END, THINK_END, THINK_START, TOOL_CALL_END, TOOL_CALL_START } from './markers.js';
import { NeedleError } from './protocol.js';
import { toolName } from './tools.js';
import { toolResultsText } from './conversation.js';
import { schemaTool, structuredValue } from './structured.js';
import { checkFields, cutAtStop, stopPrefixLength, stopSequences } from './openai-fields.js';

// Assistant messages this surface returned -> the completion text the model generated, so a
// message fed back replays exactly (reasoning included) and the engine's prefix cache holds.
const generated = new WeakMap();

const bad = (message) => new NeedleError('invalid_argument', message);

function randomId(prefix) {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The text of a message's content: a string, or the text parts of an array of parts. */
function contentText(content) {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (part && part.type === 'text' && typeof part.text === 'string') return part.text;
        throw bad(`unsupported content part ${part && part.type}: Needle reads text only`);
      })
      .join('');
  }
  throw bad('message content must be a string or an array of text parts');
}

/** An assistant message as the completion text the model writes. */
function assistantText(message) {
  if (generated.has(message)) return generated.get(message);
  const calls = message.tool_calls || [];
  if (calls.length === 0)
    return contentText(message.content) || `${TOOL_CALL_START}[]${TOOL_CALL_END}`;
  const list = calls.map((c) => {
    const fn = (c && c.function) || {};
    let args = fn.arguments ?? '{}';
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args || '{}');
      } catch (e) {
        throw bad(`tool call ${fn.name}: arguments are not JSON (${e.message})`);
      }
    }
    return { name: String(fn.name), arguments: args };
  });
  return `${TOOL_CALL_START}${JSON.stringify(list)}${TOOL_CALL_END}`;
}

/** A tool message's content as a result value: its JSON when it is JSON, else the text. */
function toolResult(message) {
  const text = contentText(message.content);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `{system, turns, last}`: the conversation before the new turn, and the new turn. */
export function messagesToTurns(messages) {
  if (!Array.isArray(messages) || messages.length === 0)
    throw bad('messages must be a non-empty array');
  const system = [];
  const turns = [];
  let results = null; // the tool-result turn being collected
  const flush = () => {
    if (results) turns.push({ role: 'tool', content: toolResultsText(results) });
    results = null;
  };
  for (const m of messages) {
    const role = m && m.role;
    if (role === 'tool') {
      (results ??= []).push(toolResult(m));
      continue;
    }
    flush();
    if (role === 'system' || role === 'developer') {
      if (turns.length)
        throw bad('system messages must come before the conversation: Needle has one system text');
      system.push(contentText(m.content));
    } else if (role === 'user') {
      turns.push({ role: 'user', content: contentText(m.content) });
    } else if (role === 'assistant') {
      turns.push({ role: 'assistant', content: assistantText(m) });
    } else {
      throw bad(`unknown message role ${role}`);
    }
  }
  flush();
  const last = turns.pop();
  if (!last || last.role === 'assistant')
    throw bad('the last message must be from the user or a tool');
  return { system: system.length ? system.join('\n') : undefined, turns, last };
}

/** `{tools, requireCall}` for a tool_choice. */
function chooseTools(tools, choice) {
  const list = tools ?? [];
  if (!Array.isArray(list)) throw bad('tools must be an array');
  if (choice === undefined || choice === null || choice === 'auto')
    return { tools: list, requireCall: false };
  if (choice === 'none') return { tools: [], requireCall: false };
  if (choice === 'required') {
    if (list.length === 0) throw bad("tool_choice 'required' needs tools");
    return { tools: list, requireCall: true };
  }
  const name = choice && choice.function && choice.function.name;
  if (typeof name !== 'string')
    throw bad(
      "tool_choice must be 'none', 'auto', 'required' or {type: 'function', function: {name}}",
    );
  const only = list.filter((t) => toolName(t) === name);
  if (only.length === 0) throw bad(`tool_choice names ${name}, which is not among the tools`);
  return { tools: only, requireCall: true };
}

/** The answer text outside the reasoning and the tool-call markup, as far as it is written. */
export function visibleText(text) {
  let out = text.split(IM_END)[0];
  for (const [start, end] of [
    [THINK_START, THINK_END],
    [TOOL_CALL_START, TOOL_CALL_END],
  ]) {
    out = out.replace(new RegExp(`${start}[\\s\\S]*?(${end}|$)`, 'g'), '');
  }
  // Hold back what may be the start of a marker still being written.
  const open = out.lastIndexOf('<');
  if (
    open >= 0 &&
    !out.slice(open).includes('>') &&
    [THINK_START, TOOL_CALL_START, IM_END].some((m) => m.startsWith(out.slice(open)))
  ) {
    out = out.slice(0, open);
  }
  return out;
}

/**
 * The calls written so far in `text`: `[{name, args}]`, `name` once its string is complete, `args`
 * the raw JSON text of the arguments as far as written. Constrained decoding (always on here)
 * writes each call as `{"name":…,"arguments":{…}}`, so the one object nested in a call is its
 * arguments.
 */
export function partialCalls(text) {
  const open = text.indexOf(TOOL_CALL_START);
  if (open < 0) return [];
  const payload = text.slice(open + TOOL_CALL_START.length).split(TOOL_CALL_END)[0];
  const calls = [];
  let depth = 0;
  let inString = false;
  let call = null; // { start, argsStart, argsEnd }
  for (let i = 0; i < payload.length; i++) {
    const c = payload[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      depth++;
      if (depth === 2 && c === '{') calls.push((call = { start: i, argsStart: -1, argsEnd: -1 }));
      else if (depth === 3 && call && call.argsStart < 0) call.argsStart = i;
    } else if (c === '}' || c === ']') {
      if (depth === 3 && call && call.argsEnd < 0) call.argsEnd = i + 1;
      depth--;
    }
  }
  return calls.map(({ start, argsStart, argsEnd }) => {
    const head = payload.slice(start, argsStart < 0 ? undefined : argsStart);
    const name = /"name"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(head);
    return {
      name: name ? JSON.parse(name[1]) : null,
      args: argsStart < 0 ? '' : payload.slice(argsStart, argsEnd < 0 ? undefined : argsEnd),
    };
  });
}

function finishReason(result) {
  if (result.stop_reason === 'max_tokens' || result.stop_reason === 'context_full') return 'length';
  return result.function_calls.length ? 'tool_calls' : 'stop';
}

function toolCalls(result) {
  return result.function_calls.map((call) => ({
    id: randomId('call_'),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
  }));
}

/** OpenAI's usage; the prompt tokens the engine reused are OpenAI's cached tokens. */
function usage(result) {
  const { prompt_tokens, completion_tokens, cached_tokens = 0 } = result.usage;
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: prompt_tokens + completion_tokens,
    prompt_tokens_details: { cached_tokens },
  };
}

/** `{tool, read}` for a response_format asking for JSON, or null for text. */
function responseFormat(format) {
  if (format === undefined || format === null || format.type === 'text') return null;
  if (format.type === 'json_object') return schemaTool({ type: 'object' });
  if (format.type === 'json_schema') {
    const spec = format.json_schema;
    if (!spec || typeof spec !== 'object')
      throw bad('response_format json_schema needs json_schema: {name, schema}');
    return schemaTool(spec.schema ?? { type: 'object' }, spec.name ?? 'respond', spec.description);
  }
  throw bad(
    `response_format type must be 'text', 'json_object' or 'json_schema', not ${format && format.type}`,
  );
}

/** The complete() options of a request (validated), the new turn's text, its stops and format. */
function toRequest(body, log) {
  if (!body || typeof body !== 'object') throw bad('create() needs a request object');
  checkFields(body, log);
  const { system, turns, last } = messagesToTurns(body.messages);
  const chosen = chooseTools(body.tools, body.tool_choice);
  const format = responseFormat(body.response_format);
  if (format && chosen.tools.length)
    throw bad("response_format asks for JSON content: pass no tools (or tool_choice 'none')");
  const options = {
    tools: format ? [format.tool] : chosen.tools,
    system,
    // A tool-result turn is the last of `turns`, with no new user query (conversation.js).
    turns: last.role === 'tool' ? [...turns, last] : turns,
    constrained: true,
    requireCall: format ? true : chosen.requireCall,
    fullSchema: Boolean(format),
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    seed: body.seed ?? undefined,
    topP: body.top_p ?? undefined,
    topK: body.top_k ?? undefined,
  };
  return {
    text: last.role === 'tool' ? '' : last.content,
    options,
    stops: stopSequences(body.stop),
    format,
  };
}

/** The content of a JSON response: the value's JSON, or what was written of it when cut off. */
function formatContent(result, format) {
  if (result.stop_reason === 'max_tokens' || result.stop_reason === 'context_full') {
    const [call] = partialCalls(result.text);
    return call ? call.args : '';
  }
  return JSON.stringify(structuredValue(result, format.read));
}

/** `needle.chat.completions`. */
export class Completions {
  #needle;
  #log;

  constructor(needle, log) {
    this.#needle = needle;
    this.#log = log;
  }

  /**
   * A chat completion (`stream: false`), or an async iterable of chunks (`stream: true`).
   * `options.signal` aborts (as the OpenAI SDK's second argument).
   */
  async create(body, options = {}) {
    const { text, options: request, stops, format } = toRequest(body, this.#log);
    const meta = {
      id: randomId('chatcmpl-'),
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? 'needle',
    };
    const streamed = { ...request, signal: options.signal };
    if (body.stream) return this.#chunks(text, streamed, meta, body.stream_options, stops, format);
    const { result, stopped } = await this.#completeUntil(text, streamed, stops);
    const calls = format ? [] : toolCalls(result);
    const content = format
      ? formatContent(result, format)
      : cutAtStop(visibleText(result.text), stops).text;
    const message = { role: 'assistant', content: content || null };
    if (calls.length) message.tool_calls = calls;
    generated.set(message, result.text);
    const finish =
      stopped || (format && finishReason(result) === 'tool_calls') ? 'stop' : finishReason(result);
    return {
      ...meta,
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
      usage: usage(result),
    };
  }

  /** complete(), ended early once the visible text holds a stop sequence: `{result, stopped}`. */
  async #completeUntil(text, request, stops) {
    if (stops.length === 0)
      return { result: await this.#needle.complete(text, request), stopped: false };
    const { stop, release } = linkedAbort(request.signal);
    let raw = '';
    let stopped = false;
    const onToken = ({ text: piece }) => {
      raw += piece;
      if (!stopped && cutAtStop(visibleText(raw), stops).stopped) {
        stopped = true;
        stop.abort();
      }
    };
    try {
      return {
        result: await this.#needle.complete(text, { ...request, signal: stop.signal, onToken }),
        stopped,
      };
    } catch (e) {
      if (stopped && e && e.code === 'aborted' && e.result) return { result: e.result, stopped };
      throw e;
    } finally {
      release();
    }
  }

  async *#chunks(text, request, meta, streamOptions, stops, format) {
    const chunk = (delta, finish = null) => ({
      ...meta,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    yield chunk({ role: 'assistant', content: '' });
    let raw = '';
    let shown = '';
    const sent = []; // per call: { id, args } streamed so far
    const finish = (result, stopped) => {
      const reason = finishReason(result);
      return stopped || (format && reason === 'tool_calls') ? 'stop' : reason;
    };
    const end = function* (result, stopped) {
      if (format && result.stop_reason !== 'max_tokens' && result.stop_reason !== 'context_full') {
        // The whole value's JSON, as the non-streamed content (a wrapped value is read back here).
        const content = formatContent(result, format);
        if (content.length > shown.length) yield chunk({ content: content.slice(shown.length) });
      }
      yield chunk({}, finish(result, stopped));
      if (streamOptions && streamOptions.include_usage)
        yield { ...meta, object: 'chat.completion.chunk', choices: [], usage: usage(result) };
    };
    const { stop, release } = linkedAbort(request.signal);
    let stopped = false;
    try {
      for await (const item of this.#needle.stream(text, { ...request, signal: stop.signal })) {
        if (!('token' in item)) {
          yield* end(item, stopped);
          return;
        }
        if (stopped) continue;
        raw += item.text;
        if (format) {
          // An object's arguments stream as they are written; a wrapped value comes whole at the end.
          const [call] = partialCalls(raw);
          const args = call && !format.wrapped ? call.args : '';
          if (args.length > shown.length && args.startsWith(shown)) {
            yield chunk({ content: args.slice(shown.length) });
            shown = args;
          }
          continue;
        }
        const cut = cutAtStop(visibleText(raw), stops);
        // Text that may begin a stop sequence waits until it is known not to.
        const visible = cut.stopped
          ? cut.text
          : cut.text.slice(0, cut.text.length - stopPrefixLength(cut.text, stops));
        if (visible.length > shown.length && visible.startsWith(shown)) {
          yield chunk({ content: visible.slice(shown.length) });
          shown = visible;
        }
        if (cut.stopped) {
          // The generation ends within a token; its AbortError carries the result.
          stopped = true;
          stop.abort();
          continue;
        }
        // Each call as OpenAI streams one: its id, type and name first, then its arguments in
        // pieces; one entry per call in a chunk (a token may finish the name and begin the
        // arguments: both go in the call's first entry).
        const deltas = [];
        partialCalls(raw).forEach((call, index) => {
          if (call.name === null) return;
          const first = !sent[index];
          if (first) sent[index] = { id: randomId('call_'), args: '' };
          const args = call.args.slice(sent[index].args.length);
          sent[index].args = call.args;
          if (first) {
            const { id } = sent[index];
            deltas.push({
              index,
              id,
              type: 'function',
              function: { name: call.name, arguments: args },
            });
          } else if (args) {
            deltas.push({ index, function: { arguments: args } });
          }
        });
        if (deltas.length) yield chunk({ tool_calls: deltas });
      }
    } catch (e) {
      if (!(stopped && e && e.code === 'aborted' && e.result)) throw e;
      yield* end(e.result, true);
    } finally {
      release();
    }
  }
}

/**
 * An AbortController that also aborts when `outer` (the caller's signal, if any) does, so a stop
 * sequence can end a generation the caller may still abort; `release()` detaches it.
 */
function linkedAbort(outer) {
  const stop = new AbortController();
  const forward = () => stop.abort();
  if (outer) {
    if (outer.aborted) stop.abort();
    else outer.addEventListener('abort', forward, { once: true });
  }
  return { stop, release: () => outer?.removeEventListener('abort', forward) };
}
