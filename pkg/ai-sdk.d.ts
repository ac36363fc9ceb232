// Types for needle-web/ai-sdk: an AI SDK provider (language-model specification v3, which `ai` 6
// runs as it is and `ai` 7 adapts). Structural, so the package needs no dependency on
// @ai-sdk/provider: the model is assignable to the SDK's LanguageModel wherever `ai` 6 or 7 is
// installed. The option and result types name what this provider reads and writes.
import type { Needle, LoadOptions, ModelSource } from './index.js';

/** A part of a prompt message, as the SDK sends it (this provider reads text and tool parts). */
export interface NeedlePromptPart {
  type: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: { type: string; value?: unknown; reason?: string };
}

export type NeedlePromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user' | 'assistant' | 'tool'; content: readonly NeedlePromptPart[] };

/** The SDK's call options this provider reads. */
export interface NeedleCallOptions {
  prompt: readonly NeedlePromptMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  stopSequences?: readonly string[];
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseFormat?:
    | { type: 'text' }
    | { type: 'json'; schema?: object; name?: string; description?: string };
  tools?: readonly (
    | { type: 'function'; name: string; description?: string; inputSchema: object }
    | { type: 'provider'; id: string; name: string; args: Record<string, unknown> }
  )[];
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  abortSignal?: AbortSignal;
}

export type NeedleContent =
  | { type: 'text'; text: string }
  /** `input`: the arguments' JSON text. */
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

export interface NeedleFinishReason {
  unified: 'stop' | 'length' | 'tool-calls' | 'other';
  /** chat.completions' `finish_reason`. */
  raw: string | undefined;
}

export interface NeedleUsage {
  inputTokens: {
    total: number | undefined;
    noCache: number | undefined;
    cacheRead: number | undefined;
    cacheWrite: undefined;
  };
  outputTokens: { total: number | undefined; text: number | undefined; reasoning: undefined };
}

/** A setting the engine cannot honour (presence and frequency penalties, provider tools, ...). */
export interface NeedleWarning {
  type: 'unsupported';
  feature: string;
  details?: string;
}

/**
 * On an answer that left calls out because the prompt already holds their results (the SDK's
 * multi-step loop would run their tools again): `{ needle: { repeatedCalls } }`. A type alias, not
 * an interface, so it is assignable to the SDK's metadata record.
 */
export type NeedleProviderMetadata = {
  needle: { repeatedCalls: { toolName: string; /** JSON text. */ input: string }[] };
};

export interface NeedleGenerateResult {
  content: NeedleContent[];
  finishReason: NeedleFinishReason;
  usage: NeedleUsage;
  warnings: NeedleWarning[];
  response: { id: string; timestamp: Date; modelId: string };
  providerMetadata?: NeedleProviderMetadata;
}

export type NeedleStreamPart =
  | { type: 'stream-start'; warnings: NeedleWarning[] }
  | { type: 'response-metadata'; id: string; timestamp: Date; modelId: string }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-input-start'; id: string; toolName: string }
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }
  | {
      type: 'finish';
      finishReason: NeedleFinishReason;
      usage: NeedleUsage;
      providerMetadata?: NeedleProviderMetadata;
    }
  | { type: 'error'; error: unknown };

export interface NeedleLanguageModel {
  readonly specificationVersion: 'v3';
  readonly provider: 'needle';
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]>;
  doGenerate(options: NeedleCallOptions): PromiseLike<NeedleGenerateResult>;
  doStream(options: NeedleCallOptions): PromiseLike<{ stream: ReadableStream<NeedleStreamPart> }>;
}

export interface NeedleProvider {
  /** The language model of `modelId` ('needle3' by default; a URL or 'owner/repo' loads that model). */
  (modelId?: string): NeedleLanguageModel;
  languageModel(modelId?: string): NeedleLanguageModel;
  readonly specificationVersion: 'v3';
}

export interface NeedleProviderOptions {
  /** A model already loaded: every model id of this provider runs on it. */
  needle?: Needle;
  /** The model loaded on first use when none is given (default 'needle3'). */
  model?: ModelSource;
  /** Needle.load options for the models this provider loads. */
  loadOptions?: LoadOptions;
  /**
   * Give the SDK calls that repeat one whose result the prompt already holds (default false: they
   * are left out, so the multi-step loop does not run a tool twice with the same input).
   */
  repeatCalls?: boolean;
}

export function createNeedle(options?: NeedleProviderOptions): NeedleProvider;
