// A provider for the Vercel AI SDK, so `generateText`, `streamText` (with `tools`) and
// `generateObject` run on Needle, in Node and in the browser:
//
//   import { generateText, tool, jsonSchema } from 'ai';
//   import { createNeedle } from 'needle-web/ai-sdk';
//   const needle = createNeedle();                      // loads 'needle3' on first use
//   const { toolCalls } = await generateText({ model: needle(), prompt: 'Lights off', tools });
//
// `createNeedle({ needle })` uses a model already loaded; `needle('needle2')` (or a URL) loads that
// one (with `loadOptions`). Each call goes through the OpenAI-compatible surface (openai.js), so a
// JSON response format is full-schema decoding and tool choice is constrained decoding; settings
// the engine cannot honour come back as the SDK's `unsupported` warnings.
//
// The model implements the language-model specification v3: `ai` 6 runs it as it is, and `ai` 7
// (whose own is v4) adapts it, changing only file parts and file tool results, which Needle does
// not read. `ai` 7 needs Node 22, so on Node 20 `npm i ai` installs 6, which refuses v4 models.
//
// In the SDK's multi-step loop (tools with `execute`, `stopWhen`) the SDK runs the tools; an answer
// that repeats a call whose result the prompt already holds would run it again, so such calls are
// left out (listed in `providerMetadata.needle.repeatedCalls`), and an answer of repeats only
// finishes the loop (finish reason `stop`).
import { Needle } from './index.js';
import { NeedleError } from './protocol.js';
import { callKey } from './repeats.js';

const PROVIDER = 'needle';

/** A tool result part's output as the tool message content. */
function resultContent(output) {
  if (!output) return '';
  switch (output.type) {
    case 'text':
    case 'error-text':
      return String(output.value);
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return JSON.stringify({ error: output.reason ?? 'execution denied' });
    default:
      throw new NeedleError(
        'unsupported',
        `tool result output of type ${output.type}: Needle reads text only`,
      );
  }
}

const textOf = (parts, role) =>
  parts
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'reasoning') return '';
      throw new NeedleError(
        'unsupported',
        `${role} content part ${part.type}: Needle reads text only`,
      );
    })
    .join('');

/** The SDK's prompt as OpenAI chat messages (what openai.js reads). */
export function promptToMessages(prompt) {
  return prompt.flatMap((m) => {
    if (m.role === 'system') return { role: 'system', content: m.content };
    if (m.role === 'user') return { role: 'user', content: textOf(m.content, 'user') };
    if (m.role === 'assistant') {
      const calls = m.content.filter((p) => p.type === 'tool-call');
      const text = textOf(
        m.content.filter((p) => p.type !== 'tool-call' && p.type !== 'tool-result'),
        'assistant',
      );
      const message = { role: 'assistant', content: text || null };
      if (calls.length) {
        message.tool_calls = calls.map((c) => ({
          id: c.toolCallId,
          type: 'function',
          function: {
            name: c.toolName,
            arguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? {}),
          },
        }));
      }
      return message;
    }
    if (m.role === 'tool') {
      return m.content
        .filter((p) => p.type === 'tool-result')
        .map((p) => ({
          role: 'tool',
          tool_call_id: p.toolCallId,
          content: resultContent(p.output),
        }));
    }
    throw new NeedleError('invalid_argument', `unknown message role ${m.role}`);
  });
}

/** The chat.completions request for a call's options, and the warnings for what it leaves out. */
export function callToRequest(options) {
  const warnings = [];
  const unsupported = (feature, details) =>
    warnings.push({ type: 'unsupported', feature, details });
  if (options.presencePenalty)
    unsupported('presencePenalty', 'Needle samples without repetition penalties');
  if (options.frequencyPenalty)
    unsupported('frequencyPenalty', 'Needle samples without repetition penalties');
  const tools = [];
  for (const t of options.tools ?? []) {
    if (t.type !== 'function') {
      unsupported(`provider tool ${t.name ?? t.id}`, 'Needle calls function tools only');
      continue;
    }
    tools.push({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    });
  }
  const choice = options.toolChoice;
  const body = {
    messages: promptToMessages(options.prompt),
    max_tokens: options.maxOutputTokens,
    temperature: options.temperature,
    top_p: options.topP,
    top_k: options.topK,
    seed: options.seed,
    stop: options.stopSequences && options.stopSequences.length ? options.stopSequences : undefined,
  };
  const format = options.responseFormat;
  if (format && format.type === 'json') {
    body.response_format = format.schema
      ? {
          type: 'json_schema',
          json_schema: {
            name: format.name ?? 'respond',
            description: format.description,
            schema: format.schema,
          },
        }
      : { type: 'json_object' };
    if (tools.length)
      unsupported(
        'tools with a JSON response format',
        'the tools are not offered: the answer is the JSON value',
      );
  } else if (tools.length) {
    body.tools = tools;
    if (choice)
      body.tool_choice =
        choice.type === 'tool'
          ? { type: 'function', function: { name: choice.toolName } }
          : choice.type;
  }
  return { body, warnings };
}

/**
 * The calls the prompt already holds results for: in the SDK's multi-step loop each step's prompt
 * carries the earlier calls and what their tools returned.
 */
export function answeredCalls(prompt) {
  const answered = new Set();
  for (const m of prompt) {
    if (m.role !== 'tool') continue;
    for (const p of m.content) if (p.type === 'tool-result') answered.add(p.toolCallId);
  }
  const keys = new Set();
  for (const m of prompt) {
    if (m.role !== 'assistant') continue;
    for (const p of m.content) {
      if (p.type === 'tool-call' && answered.has(p.toolCallId))
        keys.add(callKey(p.toolName, p.input));
    }
  }
  return keys;
}

/**
 * What an answer reports of the calls left out because the prompt already holds their results (the
 * SDK would run their tools again, repeating their side effects): `providerMetadata.needle`.
 */
function repeatsMetadata(repeats) {
  return repeats.length ? { providerMetadata: { needle: { repeatedCalls: repeats } } } : {};
}

const FINISH = { stop: 'stop', length: 'length', tool_calls: 'tool-calls' };

/** `calls`: the tool calls given to the SDK (a tool_calls answer whose calls were all left out stops). */
function finishReason(raw, calls) {
  const unified = raw === 'tool_calls' && calls === 0 ? 'stop' : (FINISH[raw] ?? 'other');
  return { unified, raw };
}

function usageOf(usage) {
  if (!usage) {
    return {
      inputTokens: {
        total: undefined,
        noCache: undefined,
        cacheRead: undefined,
        cacheWrite: undefined,
      },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
  }
  const cached = usage.prompt_tokens_details ? usage.prompt_tokens_details.cached_tokens : 0;
  return {
    inputTokens: {
      total: usage.prompt_tokens,
      noCache: usage.prompt_tokens - cached,
      cacheRead: cached,
      cacheWrite: undefined,
    },
    outputTokens: {
      total: usage.completion_tokens,
      text: usage.completion_tokens,
      reasoning: undefined,
    },
  };
}

/** One Needle model as an AI SDK language model (specification v3). */
export class NeedleLanguageModel {
  specificationVersion = 'v3';
  provider = PROVIDER;
  supportedUrls = {};
  #load;
  #repeatCalls;

  /**
   * `load`: resolves to the loaded Needle (called once, on first use). `repeatCalls`: give the SDK
   * calls that repeat one the prompt already holds the result of (left out by default).
   */
  constructor(modelId, load, { repeatCalls = false } = {}) {
    this.modelId = modelId;
    let loaded = null;
    this.#load = () => (loaded ??= Promise.resolve().then(load));
    this.#repeatCalls = repeatCalls;
  }

  /** The keys of the calls to leave out of an answer to `prompt`. */
  #answered(prompt) {
    return this.#repeatCalls ? new Set() : answeredCalls(prompt);
  }

  async doGenerate(options) {
    const needle = await this.#load();
    const { body, warnings } = callToRequest(options);
    const answered = this.#answered(options.prompt);
    const r = await needle.chat.completions.create(body, { signal: options.abortSignal });
    const { message, finish_reason } = r.choices[0];
    const content = [];
    if (message.content) content.push({ type: 'text', text: message.content });
    const repeats = [];
    for (const call of message.tool_calls ?? []) {
      if (answered.has(callKey(call.function.name, call.function.arguments))) {
        repeats.push({ toolName: call.function.name, input: call.function.arguments });
        continue;
      }
      content.push({
        type: 'tool-call',
        toolCallId: call.id,
        toolName: call.function.name,
        input: call.function.arguments,
      });
    }
    const calls = content.length - (message.content ? 1 : 0);
    return {
      content,
      finishReason: finishReason(finish_reason, calls),
      usage: usageOf(r.usage),
      warnings,
      response: { id: r.id, timestamp: new Date(r.created * 1000), modelId: this.modelId },
      ...repeatsMetadata(repeats),
    };
  }

  async doStream(options) {
    const needle = await this.#load();
    const { body, warnings } = callToRequest(options);
    const answered = this.#answered(options.prompt);
    // A call may turn out to repeat an answered one only once its arguments are whole: where the
    // prompt holds answered calls, each call's parts are held back until then.
    const live = answered.size === 0;
    const chunks = await needle.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      { signal: options.abortSignal },
    );
    const modelId = this.modelId;
    const iterator = chunks[Symbol.asyncIterator]();
    let started = false;
    let textOpen = false;
    const calls = []; // per index: { id, name, input, held: the parts not yet given }
    let finish = null;
    const parts = async function* () {
      yield { type: 'stream-start', warnings };
      for (;;) {
        const { value: chunk, done } = await iterator.next();
        if (done) break;
        if (!started) {
          started = true;
          yield {
            type: 'response-metadata',
            id: chunk.id,
            timestamp: new Date(chunk.created * 1000),
            modelId,
          };
        }
        if (chunk.usage) {
          if (textOpen) yield { type: 'text-end', id: 'text-0' };
          textOpen = false;
          const repeats = [];
          for (const call of calls) {
            if (answered.has(callKey(call.name, call.input))) {
              repeats.push({ toolName: call.name, input: call.input });
              continue;
            }
            yield* call.held;
            yield { type: 'tool-input-end', id: call.id };
            yield {
              type: 'tool-call',
              toolCallId: call.id,
              toolName: call.name,
              input: call.input,
            };
          }
          yield {
            type: 'finish',
            finishReason: finishReason(finish, calls.length - repeats.length),
            usage: usageOf(chunk.usage),
            ...repeatsMetadata(repeats),
          };
          continue;
        }
        const { delta, finish_reason } = chunk.choices[0];
        if (finish_reason) finish = finish_reason;
        if (delta.content) {
          if (!textOpen) yield { type: 'text-start', id: 'text-0' };
          textOpen = true;
          yield { type: 'text-delta', id: 'text-0', delta: delta.content };
        }
        for (const d of delta.tool_calls ?? []) {
          if (d.id) {
            calls[d.index] = { id: d.id, name: d.function.name, input: '', held: [] };
            const part = { type: 'tool-input-start', id: d.id, toolName: d.function.name };
            if (live) yield part;
            else calls[d.index].held.push(part);
          }
          const args = d.function && d.function.arguments;
          if (args) {
            const call = calls[d.index];
            call.input += args;
            const part = { type: 'tool-input-delta', id: call.id, delta: args };
            if (live) yield part;
            else call.held.push(part);
          }
        }
      }
    };
    const source = parts();
    const stream = new ReadableStream({
      async pull(controller) {
        try {
          const { value, done } = await source.next();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          controller.enqueue({ type: 'error', error });
          controller.close();
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    });
    return { stream };
  }
}

/**
 * The provider: `provider(modelId?)` (and `provider.languageModel(modelId)`) is a language model.
 * options: { needle } a loaded Needle to use, or { model = 'needle3', loadOptions } to load one;
 * `repeatCalls: true` keeps the calls that repeat one already answered in the prompt.
 */
export function createNeedle(options = {}) {
  const {
    needle,
    model: defaultModel = 'needle3',
    loadOptions = {},
    repeatCalls = false,
  } = options;
  if (typeof repeatCalls !== 'boolean')
    throw new NeedleError('invalid_argument', 'repeatCalls must be a boolean');
  const models = new Map();
  const languageModel = (modelId = needle ? 'loaded' : defaultModel) => {
    if (!models.has(modelId)) {
      const load = needle ? () => needle : () => Needle.load(modelId, loadOptions);
      models.set(modelId, new NeedleLanguageModel(String(modelId), load, { repeatCalls }));
    }
    return models.get(modelId);
  };
  const provider = (modelId) => languageModel(modelId);
  provider.languageModel = languageModel;
  provider.specificationVersion = 'v3';
  return provider;
}
