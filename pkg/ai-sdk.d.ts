// Types for needle-web/ai-sdk: an AI SDK provider (language-model specification v4, `ai` 7).
// Structural, so the package needs no dependency on @ai-sdk/provider: the model is assignable to
// the SDK's LanguageModelV4 wherever `ai` is installed.
import type { Needle, LoadOptions, ModelSource } from './index.js';

export interface NeedleLanguageModel {
  readonly specificationVersion: 'v4';
  readonly provider: 'needle';
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]>;
  doGenerate(options: any): PromiseLike<any>;
  doStream(options: any): PromiseLike<{ stream: ReadableStream<any> }>;
}

export interface NeedleProvider {
  /** The language model of `modelId` ('needle3' by default; a URL or 'owner/repo' loads that model). */
  (modelId?: string): NeedleLanguageModel;
  languageModel(modelId?: string): NeedleLanguageModel;
  readonly specificationVersion: 'v4';
}

export interface NeedleProviderOptions {
  /** A model already loaded: every model id of this provider runs on it. */
  needle?: Needle;
  /** The model loaded on first use when none is given (default 'needle3'). */
  model?: ModelSource;
  /** Needle.load options for the models this provider loads. */
  loadOptions?: LoadOptions;
}

export function createNeedle(options?: NeedleProviderOptions): NeedleProvider;
