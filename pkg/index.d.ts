// Types for needle-web. See README.md for usage.

/** Stable error codes: the Rust core's plus the package's own. */
export type NeedleErrorCode =
  | 'bad_tag'
  | 'truncated'
  | 'bad_header'
  | 'bad_tensor'
  | 'bad_tokenizer'
  | 'token_out_of_vocab'
  | 'context_full'
  | 'bad_json'
  | 'invalid_utf8'
  | 'invalid_argument'
  | 'unsupported'
  | 'aborted'
  | 'bad_source'
  | 'fetch_failed'
  | 'integrity'
  | 'disposed'
  | 'worker_failed'
  | 'wasm_failed'
  | 'internal';

/** Every failure the package reports. Aborts have `name === 'AbortError'`. */
export class NeedleError extends Error {
  readonly name: 'NeedleError' | 'AbortError';
  readonly code: NeedleErrorCode | (string & {});
  /** HTTP status, for `fetch_failed`. */
  readonly status?: number;
  /** For an abort during generation: what had been generated (stop_reason 'aborted'). */
  readonly result?: CompletionResult;
}

export type LoadPhase = 'download' | 'cache' | 'read' | 'init';

export interface LoadProgress {
  phase: LoadPhase;
  loaded: number;
  /** null when the size is unknown (no Content-Length, or a compressed transfer). */
  total: number | null;
}

export type KvPrecision = 'f32' | 'int8';
export type Numerics = 'exact' | 'deploy';

export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  /** SHA-256 of the model: lowercase hex, `sha256:<hex>` or `sha256-<base64>`. Checked before use. */
  integrity?: string;
  /** Keep downloads in Cache Storage (default true; URL sources only). */
  cache?: boolean;
  /** 'auto' (default): a module Web Worker where one exists, else inline on this thread. */
  worker?: 'auto' | boolean;
  /** KV cache precision; default: int8 when the container declares 8-bit KV, else f32. */
  kv?: KvPrecision;
  /** 'exact' (plain float, default) or 'deploy' (8-bit activations, as upstream's native engine). */
  numerics?: Numerics;
  /** Run only the first rungs of the depth ladder (fewer layers, faster, less accurate). */
  layers?: number;
  /** Tokens the session holds, prompt and completion together (default: the model's context).
   *  The KV cache is allocated for this many up front. */
  maxContext?: number;
  /** 'auto' (default) picks the SIMD128 build when the engine supports it. */
  simd?: 'auto' | boolean;
  signal?: AbortSignal;
}

/** A tool in OpenAI style (`{type: 'function', function: {...}}`) or flat (`{name, description, parameters}`). */
export type Tool = Record<string, unknown>;

export interface CompleteOptions {
  /** Tools as objects (key order is kept) or as JSON text (passed through unchanged). */
  tools?: Tool[] | string;
  system?: string;
  /** Default 256. */
  maxTokens?: number;
  /** 0 (default) is greedy. */
  temperature?: number;
  /** Whole number, 0 to 2^53-1 (default 0). */
  seed?: number;
  /** 0 (default) disables top-k. */
  topK?: number;
  /** 1 (default) disables top-p. */
  topP?: number;
  /**
   * Schema-constrained decoding (default false): only `<tool_call>[...]</tool_call>` answers
   * whose calls name a given tool, with declared argument keys, required keys present and
   * values of the declared type/enum (strings within minLength/maxLength), can be generated.
   * Numeric bounds are not enforced.
   */
  constrained?: boolean;
  /**
   * Extractive decoding (default false; implies `constrained`): every free-text string argument
   * (a `string` without an `enum`) must also be copied from the query, whole words at both
   * ends (a value at its `maxLength` may stop mid-word), ignoring ASCII case.
   * Small models slip when re-spelling a name or phrase; this turns a slip into the copy the
   * model ranks highest. Leave it off for tools whose arguments rephrase the request.
   */
  extractive?: boolean;
  /**
   * Value search (default false; implies `constrained`; needs `temperature` 0): each argument
   * value is the one the model ranks most likely as a whole, found by a best-first search over
   * its tokens, instead of committing to its first token greedily. Never less likely than the
   * greedy value; costs a few extra forward passes per value.
   */
  valueSearch?: boolean;
  /**
   * Encode chat markers typed in the query, tools or system prompt (`<|im_end|>`,
   * `<tool_call>`, ...) as the marker tokens, as upstream does (default false: they are
   * encoded as plain text, so untrusted text cannot close the turn or forge a tool call).
   */
  allowControlTokens?: boolean;
  layers?: number;
  kv?: KvPrecision;
  numerics?: Numerics;
  /** Stops generation within one token; the call rejects with an AbortError carrying `result`. */
  signal?: AbortSignal;
  onToken?: (chunk: TokenChunk) => void;
}

export interface TokenChunk {
  /** Token id. */
  token: number;
  /** Decoded text of this token (complete UTF-8; may be empty while a character is split). */
  text: string;
}

export interface FunctionCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type StopReason = 'eos' | 'im_end' | 'max_tokens' | 'context_full' | 'aborted';

export interface CompletionResult {
  function_calls: FunctionCall[];
  /** The `<think>` section, if the model wrote a non-empty one. */
  reasoning: string | null;
  /** sigmoid of the confidence head over prompt + completion, when the model has that head. */
  confidence: number | null;
  /** The completion exactly as generated (reasoning and tool-call markup included). */
  text: string;
  stop_reason: StopReason;
  usage: { prompt_tokens: number; completion_tokens: number };
  timings: { prefill_ms: number; decode_ms: number; tokens_per_s: number };
  /** 'call' when there are function calls, else 'refuse' (upstream's response type). */
  type: 'call' | 'refuse';
  /** Why the tool-call payload could not be read, if it could not. */
  parse_error: string | null;
  /** Generated token ids, the stop token included. */
  tokens: number[];
  /** Bytes held by the KV cache after this completion. */
  kv_bytes: number;
}

export interface ModelInfo {
  generation: 2 | 3;
  vocab: number;
  /** Length of one logits row. */
  logits_len: number;
  d_model: number;
  num_layers: number;
  /** Layers this engine runs (a ladder rung when below num_layers). */
  depth: number;
  max_seq_len: number;
  /** Tokens the session holds. */
  capacity: number;
  kv: KvPrecision;
  numerics: Numerics;
  heads: { confidence: boolean; embedding: boolean; router: boolean };
  kv_bytes: number;
  /** Where the engine runs: a Web Worker, or inline on the caller's thread. */
  thread: 'worker' | 'inline';
  /** Which wasm build runs the model. */
  variant: 'simd' | 'baseline';
  /** Where the bytes came from. */
  source: 'network' | 'cache' | 'file' | 'bytes' | 'blob';
  bytes: number;
  sha256: string | null;
  load_ms: { fetch: number; init: number };
}

export interface CachedModel {
  url: string;
  bytes: number;
  sha256: string | null;
  cachedAt: number | null;
}

export interface CacheUsage {
  models: CachedModel[];
  /** Total bytes of the cached models. */
  bytes: number;
  /** The origin's storage estimate, where the platform gives one. */
  usage: number | null;
  quota: number | null;
}

export type ModelSource = string | URL | Uint8Array | ArrayBuffer | ArrayBufferView | Blob;

/**
 * URL of the default model bundled with the package: a small Needle 3 trained on upstream's six
 * tool environments (`needle-web/environments`). `Needle.load()` with no source loads it.
 */
export const defaultModel: string;

export class Needle {
  private constructor();
  /** Without a source: the bundled `defaultModel`, checked against its SHA-256. */
  static load(source?: ModelSource, options?: LoadOptions): Promise<Needle>;
  static cached(url: string | URL): Promise<boolean>;
  static evict(url: string | URL): Promise<boolean>;
  static cacheUsage(): Promise<CacheUsage>;

  readonly info: ModelInfo;
  readonly disposed: boolean;
  refreshInfo(): Promise<ModelInfo>;

  complete(query: string, options?: CompleteOptions): Promise<CompletionResult>;
  stream(query: string, options?: CompleteOptions): AsyncGenerator<TokenChunk | CompletionResult, void, undefined>;
  reset(): Promise<null>;
  tokenize(text: string): Promise<Uint32Array>;
  detokenize(ids: ArrayLike<number>): Promise<string>;
  render(query: string, options?: { tools?: Tool[] | string; system?: string }): Promise<string>;
  /** Logits after each token of `ids`, from a fresh state: ids.length x vocab, row-major. */
  logits(ids: ArrayLike<number>): Promise<Float32Array>;
  dispose(): void;
}

/** Absolute URL of a URL source, resolved against the page. */
export function resolveUrl(url: string | URL): string;

export default Needle;
