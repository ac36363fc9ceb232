// A provider for the Vercel AI SDK (`ai` 7, language-model specification v4), so `generateText`,
// `streamText` (with `tools`) and `generateObject` run on Needle, in Node and in the browser:
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
import { Needle } from './index.js';
import { NeedleError } from './protocol.js';

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

const FINISH = { stop: 'stop', length: 'length', tool_calls: 'tool-calls' };

function finishReason(raw) {
  return { unified: FINISH[raw] ?? 'other', raw };
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

/** One Needle model as an AI SDK language model (specification v4). */
export class NeedleLanguageModel {
  specificationVersion = 'v4';
  provider = PROVIDER;
  supportedUrls = {};
  #load;

  /** `load`: resolves to the loaded Needle (called once, on first use). */
  constructor(modelId, load) {
    this.modelId = modelId;
    let loaded = null;
    this.#load = () => (loaded ??= Promise.resolve().then(load));
  }

  async doGenerate(options) {
    const needle = await this.#load();
    const { body, warnings } = callToRequest(options);
    const r = await needle.chat.completions.create(body, { signal: options.abortSignal });
    const { message, finish_reason } = r.choices[0];
    const content = [];
    if (message.content) content.push({ type: 'text', text: message.content });
    for (const call of message.tool_calls ?? []) {
      content.push({
        type: 'tool-call',
        toolCallId: call.id,
        toolName: call.function.name,
        input: call.function.arguments,
      });
    }
    return {
      content,
      finishReason: finishReason(finish_reason),
      usage: usageOf(r.usage),
      warnings,
      response: { id: r.id, timestamp: new Date(r.created * 1000), modelId: this.modelId },
    };
  }

  async doStream(options) {
    const needle = await this.#load();
    const { body, warnings } = callToRequest(options);
    const chunks = await needle.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      { signal: options.abortSignal },
    );
    const modelId = this.modelId;
    const iterator = chunks[Symbol.asyncIterator]();
    let started = false;
    let textOpen = false;
    const calls = []; // per index: { id, name, input }
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
          for (const call of calls) {
            yield { type: 'tool-input-end', id: call.id };
            yield {
              type: 'tool-call',
              toolCallId: call.id,
              toolName: call.name,
              input: call.input,
            };
          }
          yield { type: 'finish', finishReason: finishReason(finish), usage: usageOf(chunk.usage) };
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
            calls[d.index] = { id: d.id, name: d.function.name, input: '' };
            yield { type: 'tool-input-start', id: d.id, toolName: d.function.name };
          }
          const args = d.function && d.function.arguments;
          if (args) {
            calls[d.index].input += args;
            yield { type: 'tool-input-delta', id: calls[d.index].id, delta: args };
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
 * options: { needle } a loaded Needle to use, or { model = 'needle3', loadOptions } to load one.
 */
export function createNeedle(options = {}) {
  const { needle, model: defaultModel = 'needle3', loadOptions = {} } = options;
  const models = new Map();
  const languageModel = (modelId = needle ? 'loaded' : defaultModel) => {
    if (!models.has(modelId)) {
      const load = needle ? () => needle : () => Needle.load(modelId, loadOptions);
      models.set(modelId, new NeedleLanguageModel(String(modelId), load));
    }
    return models.get(modelId);
  };
  const provider = (modelId) => languageModel(modelId);
  provider.languageModel = languageModel;
  provider.specificationVersion = 'v4';
  return provider;
}
