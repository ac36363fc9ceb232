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
  /** A prefix snapshot that is not one, or is corrupt or truncated. */
  | 'bad_snapshot'
  /** A prefix snapshot made from another model, format version or engine option. */
  | 'snapshot_mismatch'
  /** The GPU backend found no usable adapter (or one too small for the model). */
  | 'gpu_unavailable'
  /** The GPU device was lost mid-generation. */
  | 'gpu_lost'
  | 'aborted'
  | 'bad_source'
  | 'fetch_failed'
  /** A download past `maxBytes` (or the size the Hub lists): the error carries `maxBytes`. */
  | 'too_large'
  | 'integrity'
  | 'disposed'
  /** The engine's worker ended (crashed, out of memory, terminated): the instance is disposed. */
  | 'worker_died'
  /** A load made no progress for `stallTimeout` ms (a stalled connection, a blocked engine). */
  | 'timeout'
  /** A WebAssembly trap in the engine (the message says which); the engine is dropped. */
  | 'engine_trap'
  /** `backend: 'webgpu'` where WebGPU cannot run this model (the message says why). */
  | 'gpu_unavailable'
  /** The GPU device was lost (or raised an uncaptured error) during the call; the next call
   *  opens a new device and starts from an empty sequence. */
  | 'gpu_lost'
  | 'wasm_failed'
  | 'ungrounded'
  | 'internal';

/** Every failure the package reports. Aborts have `name === 'AbortError'`. */
export class NeedleError extends Error {
  /** `extra`'s fields are copied onto the error (`status`, `result`, ...). */
  constructor(code: NeedleErrorCode | (string & {}), message: string, extra?: Record<string, unknown>);
  readonly name: 'NeedleError' | 'AbortError';
  readonly code: NeedleErrorCode | (string & {});
  /** HTTP status, for `fetch_failed`. */
  readonly status?: number;
  /** The ceiling a `too_large` download passed. */
  readonly maxBytes?: number;
  /** For an abort during generation: what had been generated (stop_reason 'aborted'). */
  readonly result?: CompletionResult;
  /** For `ungrounded` (extract): the argument paths not grounded in the text. */
  readonly paths?: string[];
  /** For `bad_source` from a Hub repository with several `.cact` files: their paths. */
  readonly files?: string[];
  /** For an aborted `run()`: the steps executed before the abort. */
  readonly steps?: AgentStep[];
  readonly results?: unknown[];
}

export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';

export interface Logger {
  error?(message: string): void;
  warn?(message: string): void;
  info?(message: string): void;
  debug?(message: string): void;
}

/** A stored model. */
export interface StoredModel {
  bytes: Uint8Array;
  sha256: string | null;
  cachedAt: number;
}

/** Your own model storage for the `cache` option. */
export interface ModelStore {
  get(url: string): Promise<StoredModel | undefined>;
  put(url: string, entry: StoredModel): Promise<void>;
  delete(url: string): Promise<boolean>;
  keys(): Promise<string[]>;
}

export type CacheBackend = 'cache-api' | 'indexeddb' | 'none';
export type CacheChoice = 'auto' | CacheBackend | ModelStore;

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
  /**
   * Where downloads are kept (URL sources only): 'auto' (default) tries Cache Storage, then
   * IndexedDB, then keeps nothing; or one backend by name; or your own store. A refused or full
   * storage is a warning through `logger`, never a failed load. `true`/`false` mean 'auto'/'none'.
   */
  cache?: CacheChoice | boolean;
  /** For models behind auth: headers added to each request, or a function called like fetch. */
  fetch?: { headers: HeadersInit } | ((url: string, init: RequestInit) => Promise<Response>);
  /** Where warnings (storage refused, quota full) and info (download resumed) go; default console. */
  logger?: Logger;
  /** The least severe level passed to `logger` (default 'warn'). */
  logLevel?: LogLevel;
  /**
   * 'auto' (default): a module Web Worker in browsers, a worker_threads Worker in Node, else
   * inline; `true` requires a worker; `false` runs the engine inline on this thread.
   */
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
  /**
   * Threads the engine splits its work across. 'auto' (default): the threaded build, with one
   * thread per core (at most 8), where the engine runs in a Web Worker on a cross-origin isolated
   * page (`crossOriginIsolated`: shared WebAssembly memory) with SIMD128 and 2+ cores; else one
   * thread. A number requires that many threads (the load fails with `unsupported` where they are
   * not possible); `false`: one thread.
   */
  threads?: 'auto' | number | false;
  /**
   * Where the model runs. 'auto' (default): a CPU build (`simd`, `threads`) answers from the
   * load on; where `navigator.gpu`, JSPI (`WebAssembly.Suspending`) and a hardware adapter exist
   * (a software one, such as SwiftShader or llvmpipe, is declined), the gpu build is prepared in
   * the background, both are calibrated between requests on this model, and requests move to the
   * GPU only if it measured faster; the choice is remembered per adapter, model and version
   * (`info.backend_choice`, `backend_reason`, `calibration`; README, WebGPU). 'webgpu': the gpu
   * build on any adapter (a Needle 3 model whose largest tensor fits the adapter's
   * `maxStorageBufferBindingSize` and `maxBufferSize`, exact numerics), or a `gpu_unavailable`
   * rejection. 'cpu': never the GPU.
   */
  backend?: 'auto' | 'webgpu' | 'cpu';
  /**
   * The GPU engine's kernels (the gpu build only; `info.gpu_kernels`): 'plain' (default), the
   * first kernels, an invocation per output row and token; 'tiled', shaped for a GPU (a
   * workgroup per row block for one token, tiles of rows x tokens decoding each weight once per
   * prefill chunk, chunks of up to 64 tokens). Both meet the same parity bars; which is faster
   * is unmeasured on a real GPU. Native builds also have 'subgroup', which no browser build can
   * run yet: a load that asks for it rejects with `unsupported` on every backend.
   */
  gpuKernels?: 'plain' | 'tiled';
  /**
   * For an `ArrayBuffer` (or a view on a whole one) handed to a Worker engine: transfer it instead
   * of copying it (default false). The buffer is detached (length 0) once `load` is called.
   */
  transfer?: boolean;
  signal?: AbortSignal;
  /**
   * Milliseconds the load may go without progress before it fails with code `timeout`
   * (default 120000; `Infinity` waits for ever).
   */
  stallTimeout?: number;
  /**
   * The most bytes a download may take (default 2 GiB; less where the Hub's listing gives a
   * named model's file a smaller size): past it the load fails with code `too_large`.
   */
  maxBytes?: number;
  /**
   * Prefix snapshots (default true): a system + tools prefix, once prefilled, is stored beside the
   * model (in `cache`'s storage) and loaded by a later page's first request or `prepare()` instead
   * of prefilling it. An array also brings in snapshots made ahead of time (`needle snapshot`):
   * URLs or bytes. `false`: none are stored or loaded.
   */
  snapshots?: boolean | ReadonlyArray<SnapshotSource>;
  /** Bytes the stored snapshots may take together (default 256 MiB); the least recently used go first. */
  snapshotBudget?: number;
  /**
   * The folder holding the package's worker.js and wasm/ when they are not beside this module (a
   * bundle that did not copy them). A worker on another origin (a CDN) starts through a
   * same-origin blob: module either way.
   */
  assetBase?: string | URL;
  /** The worker script itself (overrides `assetBase`). */
  workerUrl?: string | URL;
}

/** Where a model name resolves (options of `load`, `download`, `cached`, `evict`). */
export interface ModelNameOptions {
  /** Branch, tag or commit of the Hub repository (default 'main'). */
  revision?: string;
  /** The `.cact` to take from an `owner/repo` (default: its one `.cact`, from its listing). */
  file?: string;
  /**
   * A mirror with the Hub's layout (`{host}/{repo}/resolve/{revision}/{file}`); default
   * `Needle.modelHost`.
   */
  modelHost?: string | URL;
}

/** Upstream's published models, by name; or any Hub repository as `'owner/repo'`. */
export type ModelName = 'needle3' | 'needle2' | `${string}/${string}`;

export interface DownloadOptions extends ModelNameOptions {
  onProgress?: (progress: LoadProgress) => void;
  integrity?: string;
  cache?: CacheChoice | boolean;
  fetch?: LoadOptions['fetch'];
  logger?: Logger;
  logLevel?: LogLevel;
  signal?: AbortSignal;
  /** As for `load`: milliseconds without progress before it fails with code `timeout`. */
  stallTimeout?: number;
  /** As for `load`: the most bytes the download may take (default 2 GiB). */
  maxBytes?: number;
}

/** Which stored copy `cached` / `evict` mean: the storage, and a name's resolution. */
export interface StoredModelOptions extends ModelNameOptions {
  cache?: CacheChoice | boolean;
}

/** What `Needle.download` fetched (or found stored). */
export interface DownloadedModel {
  /** The file URL a name resolved to, or the URL given (absolute). */
  url: string;
  bytes: Uint8Array;
  sha256: string;
  from: 'network' | 'cache' | 'file';
  storage: CacheBackend | 'custom';
}

/** A JSON value (what `enum`, `const` and `default` hold). */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Keys every schema may carry (zod's `toJSONSchema` writes `$schema`; `$ref`s point into `$defs`). */
interface SchemaBase {
  description?: string;
  title?: string;
  default?: JsonValue;
  examples?: readonly JsonValue[];
  $schema?: string;
  $id?: string;
  $defs?: { [name: string]: JsonSchema };
  definitions?: { [name: string]: JsonSchema };
}

/**
 * One earlier turn of a conversation. An assistant turn's `content` is a previous result's
 * `text` (as generated, so the prompt re-tokenizes to what the engine already holds); a tool
 * turn's is the JSON text of the call results (rendered inside `<tool_result>` markers).
 */
export interface ConversationTurn {
  role: 'user' | 'assistant' | 'tool';
  content: string;
}

export interface StringSchema extends SchemaBase {
  type: 'string';
  enum?: readonly string[];
  const?: string;
  /** Enforced by constrained decoding. */
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

export interface NumberSchema extends SchemaBase {
  type: 'number' | 'integer';
  enum?: readonly number[];
  const?: number;
  /** Shown to the model; not enforced by constrained decoding. */
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
}

export interface BooleanSchema extends SchemaBase {
  type: 'boolean';
  enum?: readonly boolean[];
  const?: boolean;
}

export interface NullSchema extends SchemaBase {
  type: 'null';
}

export interface ArraySchema extends SchemaBase {
  type: 'array';
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
}

export interface ObjectSchema extends SchemaBase {
  type: 'object';
  properties?: { [name: string]: JsonSchema };
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
}

/** A schema without `type` whose values are listed: `{ enum: ['small', 'large'] }`. */
export interface EnumSchema extends SchemaBase {
  type?: undefined;
  enum: readonly JsonValue[];
}

/** A schema without `type` of one value: `{ const: 'card' }`. */
export interface ConstSchema extends SchemaBase {
  type?: undefined;
  const: JsonValue;
}

/** A value of any of the listed types (`['string', 'null']`: a nullable string). */
export interface TypeListSchema
  extends SchemaBase,
    Omit<StringSchema, 'type' | 'enum' | 'const' | keyof SchemaBase>,
    Omit<NumberSchema, 'type' | 'enum' | 'const' | keyof SchemaBase>,
    Omit<ArraySchema, 'type' | keyof SchemaBase>,
    Omit<ObjectSchema, 'type' | keyof SchemaBase> {
  type: readonly ('string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object')[];
  enum?: readonly JsonValue[];
  const?: JsonValue;
}

/** A value of one of the alternatives (zod's `.nullable()`, unions, discriminated unions). */
export interface AnyOfSchema extends SchemaBase {
  anyOf: readonly JsonSchema[];
}

/** A value of exactly one of the alternatives. */
export interface OneOfSchema extends SchemaBase {
  oneOf: readonly JsonSchema[];
}

/** A schema defined elsewhere in the document: `{ $ref: '#/$defs/Address' }`. */
export interface RefSchema extends SchemaBase {
  $ref: string;
}

/**
 * The JSON Schema vocabulary tool parameters are written in (a misspelled key is a type error).
 * What each decoding mode enforces, and what `fullSchema` refuses, is the engine's (README).
 */
export type JsonSchema =
  | StringSchema
  | NumberSchema
  | BooleanSchema
  | NullSchema
  | ArraySchema
  | ObjectSchema
  | EnumSchema
  | ConstSchema
  | TypeListSchema
  | AnyOfSchema
  | OneOfSchema
  | RefSchema;

/**
 * The TypeScript type of the values a JSON schema (written inline or `as const`) describes. A
 * `$ref` is `unknown` (its target is elsewhere in the document).
 */
export type FromSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
  ? E
  : S extends { anyOf: readonly (infer A)[] }
  ? FromSchema<A>
  : S extends { oneOf: readonly (infer A)[] }
  ? FromSchema<A>
  : S extends { type: readonly (infer T)[] }
  ? FromTypeList<S, T>
  : S extends { type: 'string' }
    ? string
    : S extends { type: 'number' | 'integer' }
      ? number
      : S extends { type: 'boolean' }
        ? boolean
        : S extends { type: 'null' }
          ? null
          : S extends { type: 'array'; items: infer I }
            ? FromSchema<I>[]
            : S extends { type: 'array' }
              ? unknown[]
              : S extends { type: 'object'; properties: infer P }
                ? ObjectFromSchema<P, S extends { required: readonly (infer R)[] } ? R : never>
                : S extends { type: 'object' }
                  ? Record<string, unknown>
                  : unknown;

/** Each listed type as if it were the schema's one `type`. */
type FromTypeList<S, T> = T extends string ? FromSchema<Omit<S, 'type'> & { type: T }> : never;

/** Required properties as they are, the others optional. */
type ObjectFromSchema<P, R> = {
  -readonly [K in keyof P as K extends R ? K : never]: FromSchema<P[K]>;
} & {
  -readonly [K in keyof P as K extends R ? never : K]?: FromSchema<P[K]>;
} extends infer O
  ? { [K in keyof O]: O[K] }
  : never;

/** What `extract` returns for a schema: the tool's parameters' record, or a bare schema's. */
export type ExtractedRecord<S> = S extends { function: { parameters: infer P } }
  ? FromSchema<P>
  : S extends { name: string; parameters: infer P }
    ? FromSchema<P>
    : S extends { type: 'object' }
      ? FromSchema<S>
      : Record<string, unknown>;

/** A function the model may call. */
export interface FunctionDefinition<Name extends string = string> {
  name: Name;
  description?: string;
  parameters?: ObjectSchema;
}

/** OpenAI style: `{ type: 'function', function: { name, description, parameters } }`. */
export interface OpenAITool<Name extends string = string> {
  type: 'function';
  function: FunctionDefinition<Name>;
}

/** A tool in OpenAI style or flat (`{ name, description, parameters }`). */
export type Tool<Name extends string = string> = OpenAITool<Name> | FunctionDefinition<Name>;

/** The names of a tool list's functions (string when the list is JSON text or not literal). */
export type ToolName<T> = T extends readonly (infer U)[]
  ? U extends { function: { name: infer N extends string } }
    ? N
    : U extends { name: infer N extends string }
      ? N
      : string
  : string;

/**
 * The options of `complete()`: the request's (their names, defaults and checks are the core's,
 * src/session/options.rs), the engine's for this request (layers, kv, numerics) and the call's
 * (signal, onToken). An option not listed here, or a value of the wrong type, rejects with
 * `invalid_argument`.
 */
export interface CompleteOptions<T extends readonly Tool[] | string = readonly Tool[] | string> {
  /** Tools as objects (key order is kept) or as JSON text (passed through unchanged). */
  tools?: T;
  system?: string;
  /**
   * The conversation so far, oldest first, rendered before the query (the tool list once, in
   * the first user turn). With earlier turns an empty query adds no user turn: the model answers
   * the last one (how tool results are fed back). The engine reuses whatever prefix of the
   * prompt its state already holds (`usage.cached_tokens`); results equal a fresh session's.
   * A conversation longer than the context fails with `context_full`; nothing is truncated.
   */
  turns?: ConversationTurn[];
  /**
   * The date fact's value on the host's clock, `'YYYY-MM-DD Ddd HH:MM'` (e.g. `'2026-12-02 Wed
   * 06:45'`): prefixed to the system text as `date: …` unless it already holds a `date:` key or
   * an ISO date, or is JSON (upstream's `auto_date` rule). Default: no date fact.
   */
  date?: string;
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
   * Implies `constrained`: the refusal `[]` is masked, so the answer calls a tool (default false).
   * When the tokens left run low the engine closes the call itself, so it parses (README).
   */
  requireCall?: boolean;
  /**
   * Implies `constrained`: each call's arguments are held to its tool's whole JSON schema (nested
   * values, numeric bounds, string lengths, patterns), so they always validate. A schema keyword
   * the matcher cannot hold (anyOf, $ref, multipleOf, …) rejects with code `unsupported`.
   */
  fullSchema?: boolean;
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

export interface FunctionCall<Name extends string = string> {
  /** One of the given tools' names (constrained decoding guarantees it; greedy usually). */
  name: Name;
  arguments: Record<string, unknown>;
}

/** Upstream's `validation` object. */
export interface Validation {
  /**
   * `tool.path` of each argument value the input does not license: a number no user-side text
   * or the system text writes (the date fact aside), or a date whose year contradicts the years
   * the user wrote (the date fact's year counts for relative requests such as "tomorrow").
   */
  ungrounded: string[];
  /** The newest message negates its request ("don't", "do not", "never", ...). */
  negation: boolean;
}

export type StopReason = 'eos' | 'im_end' | 'max_tokens' | 'context_full' | 'aborted';

export interface CompletionResult<Name extends string = string> {
  function_calls: FunctionCall<Name>[];
  /** The `<think>` section, if the model wrote a non-empty one. */
  reasoning: string | null;
  /** sigmoid of the confidence head over prompt + completion, when the model has that head. */
  confidence: number | null;
  /** The completion exactly as generated (reasoning and tool-call markup included). */
  text: string;
  stop_reason: StopReason;
  /** `cached_tokens`: prompt tokens the engine's state already held, so not run again. */
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens: number };
  timings: { prefill_ms: number; decode_ms: number; tokens_per_s: number };
  /** 'call' when there are function calls, else 'refuse' (upstream's response type). */
  type: 'call' | 'refuse';
  /** Grounding checks on the calls (see README). */
  validation: Validation;
  /** Why the tool-call payload could not be read, if it could not. */
  parse_error: string | null;
  /** Generated token ids, the stop token included. */
  tokens: number[];
  /** Bytes held by the KV cache after this completion. */
  kv_bytes: number;
  /**
   * How the system + tools prefix this request ran on came to the engine: 'loaded' (from a
   * stored or given snapshot), 'saved' (prefilled and stored as a snapshot), else null.
   */
  snapshot: 'loaded' | 'saved' | null;
}

/** A prefix snapshot made ahead of time: its URL or its bytes. */
export type SnapshotSource = string | URL | Uint8Array | ArrayBuffer | ArrayBufferView;

/** The system + tools prefix `prepare()` brings into the engine. */
export interface PrefixOptions {
  tools?: readonly Tool[] | string;
  system?: string;
  /** The date fact's value ('YYYY-MM-DD Ddd HH:MM'), as `complete()` takes it. */
  date?: string;
}

export interface Prepared {
  /**
   * 'held': the engine already held it; 'loaded': from a snapshot; 'saved': prefilled and stored;
   * 'prefilled': prefilled, not stored (no storage, or `snapshots: false`); null: nothing to
   * prepare (no system prompt or tools, or a Needle 2 model).
   */
  snapshot: 'held' | 'loaded' | 'saved' | 'prefilled' | null;
  /** Prefix tokens it holds (null when held already). */
  tokens: number | null;
}

export interface CachedSnapshot {
  /** Its entry in storage (`Needle.evict(url)` drops it). */
  url: string;
  /** SHA-256 of what its header names: format version, model, engine options, prefix ids. */
  key: string;
  bytes: number;
  /** When it was stored or last used. */
  cachedAt: number | null;
}

/** One engine's time for backend 'auto''s calibration request (ms; `tokens`: decoded). */
export interface CalibrationFigure {
  prefill_ms: number;
  decode_ms: number;
  ms: number;
  tokens: number;
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
  /** Where the engine runs: a worker (Web Worker or worker_threads), or inline on the caller's thread. */
  thread: 'worker' | 'inline';
  /** Which wasm build runs the model ('gpu': the WebGPU build, see `backend`). */
  variant: 'threaded' | 'simd' | 'baseline' | 'gpu';
  /** Where the forward pass runs: 'webgpu' only when it does run on the GPU. */
  backend: 'webgpu' | 'cpu';
  /** The kernel variant the forward pass runs when `backend` is 'webgpu' (`gpuKernels`); else
   *  null. */
  gpu_kernels: 'plain' | 'tiled' | null;
  /** The WebGPU adapter the gpu build holds a device on (null on the CPU builds). */
  adapter: { vendor: string; architecture: string; device: string; description: string } | null;
  /**
   * Backend 'auto''s choice (null for a forced backend): 'preparing' and 'calibrating' while the
   * CPU serves and the GPU engine is readied and measured in the background; then 'webgpu' or
   * 'cpu' (measured, or remembered from an earlier calibration); 'declined' where the GPU cannot
   * be used (no WebGPU or JSPI, a software adapter, a failed preparation). `info` is taken at
   * load: `refreshInfo()` shows the choice later.
   */
  backend_choice: 'preparing' | 'calibrating' | 'webgpu' | 'cpu' | 'declined' | null;
  /** Under 'auto', why the model runs where it does (the state, the verdict with both figures,
   *  or why the GPU was declined); null for a forced backend. */
  backend_reason: string | null;
  /** Under 'auto', both engines' figures for the same calibration request once measured (or
   *  remembered); else null. */
  calibration: { cpu: CalibrationFigure; webgpu: CalibrationFigure } | null;
  /** GPU memory the forward pass holds when `backend` is 'webgpu' (every buffer: the weights as
   *  their stored codes, activations, the sequence state at full capacity); else null. */
  gpu_bytes: number | null;
  /** Threads the engine's work is split across (1 unless `variant` is 'threaded'). */
  threads: number;
  /** Where the bytes came from. */
  source: 'network' | 'cache' | 'file' | 'bytes' | 'blob';
  bytes: number;
  sha256: string | null;
  /** The storage a URL source went through ('none' when nothing could keep it). */
  storage: CacheBackend | 'custom' | null;
  /** `device` (gpu build only, within `init`): opening the WebGPU adapter and device and
   *  checking a probe kernel's round trip. */
  load_ms: { fetch: number; init: number; device?: number };
}

export interface CachedModel {
  url: string;
  bytes: number;
  sha256: string | null;
  cachedAt: number | null;
}

export interface CacheUsage {
  /** The storage in use: the first that works ('auto'), the one named, or 'custom'. */
  backend: CacheBackend | 'custom';
  models: CachedModel[];
  /** Prefix snapshots stored beside the models. */
  snapshots: CachedSnapshot[];
  /** Total bytes of the cached models and snapshots. */
  bytes: number;
  /** The origin's storage estimate, where the platform gives one. */
  usage: number | null;
  quota: number | null;
}

export type ModelSource = string | URL | Uint8Array | ArrayBuffer | ArrayBufferView | Blob;

export class Needle {
  private constructor();
  /**
   * Without a source: the default model where the package is served as files (Node, an import
   * map); from a bundle, pass `defaultModel` from 'needle-web/default-model'.
   */
  static load(
    source?: ModelSource | ModelName,
    options?: LoadOptions & ModelNameOptions,
  ): Promise<Needle>;
  /** Fetches a model into storage without starting an engine (a prefetch); its bytes, SHA-256. */
  static download(
    source: string | URL | ModelName,
    options?: DownloadOptions,
  ): Promise<DownloadedModel>;
  static cached(url: string | URL | ModelName, options?: StoredModelOptions): Promise<boolean>;
  static evict(url: string | URL | ModelName, options?: StoredModelOptions): Promise<boolean>;
  /** The host model names resolve against ('https://huggingface.co' unless set; null resets). */
  static get modelHost(): string;
  static set modelHost(host: string | URL | null);
  static cacheUsage(options?: { cache?: CacheChoice | boolean }): Promise<CacheUsage>;

  readonly info: ModelInfo;
  /** True after `dispose()`, or once the engine's worker died (calls then reject with `worker_died`). */
  readonly disposed: boolean;
  refreshInfo(): Promise<ModelInfo>;

  complete<const T extends readonly Tool[] | string = readonly Tool[] | string>(
    query: string,
    options?: CompleteOptions<T>,
  ): Promise<CompletionResult<ToolName<T>>>;
  stream<const T extends readonly Tool[] | string = readonly Tool[] | string>(
    query: string,
    options?: CompleteOptions<T>,
  ): AsyncGenerator<TokenChunk | CompletionResult<ToolName<T>>, void, undefined>;
  /**
   * Prefills a system + tools prefix in the engine now (or loads its snapshot), so the request
   * that follows runs only its own tokens; a `complete()` sent meanwhile waits for it.
   */
  prepare(prefix: PrefixOptions, options?: { signal?: AbortSignal }): Promise<Prepared>;
  /** Loads a snapshot made ahead of time as the engine's prefix (and keeps it for its requests). */
  loadSnapshot(
    snapshot: SnapshotSource,
    options?: { signal?: AbortSignal },
  ): Promise<{ tokens: number }>;
  reset(): Promise<null>;
  tokenize(text: string): Promise<Uint32Array>;
  detokenize(ids: ArrayLike<number>): Promise<string>;
  render(query: string, options?: { tools?: readonly Tool[] | string; system?: string }): Promise<string>;
  /** Logits after each token of `ids`, from a fresh state: ids.length x vocab, row-major. */
  logits(ids: ArrayLike<number>): Promise<Float32Array>;
  dispose(): void;

  /** A multi-turn conversation: every turn stays in context until `reset()`. */
  conversation(options?: ConversationOptions): Conversation;
  /** The agent loop on a fresh conversation: tools may carry the functions that run the calls. */
  run(query: string, options?: RunOptions & Pick<ConversationOptions, 'tools' | 'system' | 'autoDate' | 'logger'>): Promise<RunResult>;
  /** The record (arguments of the model's one call), or null when it declines. Rejects with code
   *  `ungrounded` (listing `paths`) when `strict` and a value is not grounded in the text. */
  extract<const S extends Tool | JsonSchema>(
    text: string,
    schema: S,
    options?: ExtractOptions,
  ): Promise<ExtractedRecord<S> | null>;
  /** The record's type given by hand (a schema as JSON text, or one built at run time). */
  extract<T = Record<string, unknown>>(
    text: string,
    schema: Tool | Record<string, unknown> | string,
    options?: ExtractOptions,
  ): Promise<T | null>;
  /**
   * Structured output: a value that validates against `schema` (any JSON Schema the matcher can
   * hold, an array or enum included). Rejects with code `unsupported` for a keyword it cannot
   * hold, `incomplete` when the value was cut off.
   */
  generate<const S extends JsonSchema>(text: string, options: GenerateOptions<S>): Promise<FromSchema<S>>;
  generate<T = unknown>(text: string, options: GenerateOptions<Record<string, unknown> | string>): Promise<T>;
  /** An OpenAI-compatible surface (WebLLM's shape). */
  readonly chat: { readonly completions: ChatCompletions };
}

export interface GenerateOptions<S> extends Omit<CompleteOptions, 'tools' | 'requireCall' | 'fullSchema'> {
  schema: S;
  /** The name of the one tool the schema becomes (default: its `title`, else 'respond'). */
  name?: string;
}

/** A tool function: called with the call's arguments; may be async; a throw becomes `{error}`. */
export type ToolFunction = (
  args: Record<string, unknown>,
  context: { signal?: AbortSignal; call: FunctionCall },
) => unknown;

/**
 * Tools for conversations and the agent loop: schemas (as for `complete`), schemas with their
 * function (`{name, description, parameters, fn}` or OpenAI style with `fn`), and `{name: fn}`
 * maps binding functions to schemas given beside them.
 */
export type AgentTool = Tool | (Tool & { fn: ToolFunction }) | Record<string, ToolFunction>;

export interface ConversationOptions extends Omit<CompleteOptions, 'tools' | 'signal' | 'onToken'> {
  tools?: AgentTool[] | string;
  /** Prefix upstream's date fact (`date: YYYY-MM-DD Ddd HH:MM`, local time) to the system text
   *  unless it has one, so "tomorrow" can be resolved. Default false: the bundled model was trained
   *  without it and loses 14 of 192 acceptance cases with it; upstream's models want true. */
  autoDate?: boolean;
  /** Reset before every send (default false). */
  stateless?: boolean;
  /** Where the warning after 4 queries without reset goes (default: console). */
  logger?: Logger;
}

export interface Turn {
  role: 'user' | 'assistant' | 'tool';
  /** The user's text, the model's completion text, or the JSON list of tool results. */
  content: string;
  /** On assistant turns. */
  function_calls?: FunctionCall[];
  reasoning?: string | null;
}

export interface RunOptions extends Omit<CompleteOptions, 'tools' | 'system'> {
  /** Model answers executed at most (default 8). */
  maxSteps?: number;
  /** Calls with ungrounded arguments are not executed: `{error: "ungrounded PATH"}` (default true). */
  strict?: boolean;
  /** Schema-constrained decoding (default true here, unlike `complete()`, and whatever a
   *  conversation was created with): only calls that fit the tools' schemas reach the functions. */
  constrained?: boolean;
  /**
   * Run a call again when the model repeats one already answered in this run (same tool, equal
   * arguments). Default false: the repeat is not run (its result is the one it had, and the step
   * lists it in `repeated`) and the run ends after that step.
   */
  repeatCalls?: boolean;
  /** Called after each executed step. */
  onStep?: (step: AgentStep) => void;
}

export interface AgentStep {
  function_calls: FunctionCall[];
  /** One per call, in order: the function's value or `{error}` (a repeat's: the result it had). */
  results: unknown[];
  /** The indices of the calls not run because they repeat one already answered in this run. */
  repeated: number[];
}

export interface RunResult extends CompletionResult {
  /** Every executed call's result, in order (repeats that were not run are not in it). */
  results: unknown[];
  steps: AgentStep[];
}

export class Conversation {
  private constructor();
  readonly history: Turn[];
  readonly system: string | null;
  /** The tools' schemas as the model sees them (JSON text passes through as given). */
  readonly tools: Tool[] | string;
  /** The functions bound to tool names, which `run` calls. */
  readonly functions: ReadonlyMap<string, ToolFunction>;
  send(text: string, options?: Omit<CompleteOptions, 'tools' | 'system'>): Promise<CompletionResult>;
  /** Sends a tool-result turn (the JSON list of `results`). */
  sendResults(results: unknown[], options?: Omit<CompleteOptions, 'tools' | 'system'>): Promise<CompletionResult>;
  run(query: string, options?: RunOptions): Promise<RunResult>;
  reset(): void;
}

export interface ExtractOptions extends Omit<CompleteOptions, 'tools'> {
  /** Reject values not grounded in the text (default true). */
  strict?: boolean;
  /** The date fact before the system text (default false, as for conversations; upstream's is true). */
  autoDate?: boolean;
  /** Hold the record to the whole schema, which may then be any JSON Schema (see `generate`). */
  fullSchema?: boolean;
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | { type: 'text'; text: string }[] }
  | { role: 'user'; content: string | { type: 'text'; text: string }[] }
  | { role: 'assistant'; content?: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id?: string; content: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; /** JSON text. */ arguments: string };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type?: 'function'; function: { name: string } };

export interface ChatCompletionRequest {
  messages: readonly ChatMessage[];
  tools?: readonly Tool[];
  /** Constrained decoding is on: 'auto' (default) a call or the refusal; 'required' a call;
   *  a named function: only it, called; 'none': no tools offered. */
  tool_choice?: ToolChoice;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** Needle's own: sample among the k most likely tokens. */
  top_k?: number;
  seed?: number;
  /** Content ends before the first of these (generation stops there). */
  stop?: string | readonly string[];
  /** JSON content held to a schema (full-schema decoding); no tools with it. */
  response_format?:
    | { type: 'text' }
    | { type: 'json_object' }
    | { type: 'json_schema'; json_schema: { name?: string; description?: string; schema?: Record<string, unknown>; strict?: boolean } };
  /** Refused (code `unsupported`) unless off: Needle returns no log-probabilities. */
  logprobs?: false | null;
  /** Refused (code `unsupported`) unless 0: Needle samples without penalties. */
  frequency_penalty?: 0 | null;
  presence_penalty?: 0 | null;
  n?: 1;
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

export type FinishReason = 'tool_calls' | 'stop' | 'length';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens the engine already held (a conversation's earlier turns), not run again. */
  prompt_tokens_details: { cached_tokens: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [{ index: 0; message: { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }; finish_reason: FinishReason; logprobs: null }];
  usage: ChatUsage;
}

/** A piece of a streamed call: the first has `id`, `type` and `name`; later ones more `arguments` text. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** Empty in the last chunk when `stream_options.include_usage`, which carries `usage`. */
  choices: { index: 0; delta: { role?: 'assistant'; content?: string; tool_calls?: ChatToolCallDelta[] }; finish_reason: FinishReason | null; logprobs: null }[];
  usage?: ChatUsage;
}

export interface ChatCompletions {
  create(request: ChatCompletionRequest & { stream?: false }, options?: { signal?: AbortSignal }): Promise<ChatCompletion>;
  create(request: ChatCompletionRequest & { stream: true }, options?: { signal?: AbortSignal }): Promise<AsyncIterable<ChatCompletionChunk>>;
  /** `stream` known only at run time: either shape. */
  create(
    request: ChatCompletionRequest,
    options?: { signal?: AbortSignal },
  ): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
}

/** Absolute URL of a URL source, resolved against the page. */
export function resolveUrl(url: string | URL): string;

export default Needle;
