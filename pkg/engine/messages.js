// The shape of every request the engine takes, checked where a message crosses into it: the
// engine host's message loop (worker.js) and an extension's shared engine (extension.js), whose
// pages are other code. A field the wasm surface reads as a string, a byte array or a number
// must be one: anything else can trap the engine (issue 51). One schema per request type, here;
// the values' meaning (an option's range, a token id's vocabulary) stays the core's to check.
import { NeedleError, Req } from '../protocol.js';

// Bounds on sizes no real request comes near, so a hostile one is refused before it is copied
// into the engine: text far past any context, token ids past any context, a request's JSON.
export const MAX_TEXT = 1 << 22; // characters
export const MAX_IDS = 1 << 20;
export const MAX_REQUEST_JSON = 1 << 24; // characters of a complete request as JSON

/** A check: `test(value)` is true when the value fits; `want` says what fits; `why(value)`, what
 * does not, where there is more to say. */
const check = (want, test, why = undefined) => ({ want, test, why });

const TEXT = check(
  `a string of at most ${MAX_TEXT} characters`,
  (v) => typeof v === 'string' && v.length <= MAX_TEXT,
);
const NUMBER = check('a number', (v) => typeof v === 'number');
const BOOLEAN = check('a boolean', (v) => typeof v === 'boolean');
const BYTES = check('a Uint8Array', (v) => v instanceof Uint8Array);
const IDS = check(
  `an array of at most ${MAX_IDS} token ids`,
  (v) => (Array.isArray(v) || v instanceof Uint32Array) && v.length <= MAX_IDS,
);
const BLOB = check('a Blob', (v) => typeof Blob !== 'undefined' && v instanceof Blob);
const HANDLE = check('a lent-bytes handle', (v) => Number.isSafeInteger(v));

const optional = (c) =>
  check(`${c.want}, or null`, (v) => v === undefined || v === null || c.test(v));
const either = (a, b) => check(`${a.want} or ${b.want}`, (v) => a.test(v) || b.test(v));

/** A plain object whose named fields pass their checks (other fields are never read). */
const fields = (schema) =>
  check(
    'an object',
    (v) => fieldError(v, schema) === null,
    (v) => fieldError(v, schema),
  );

/** The first field of `value` that fails `schema`, as a message; null when all pass. */
function fieldError(value, schema) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not an object';
  for (const [name, c] of Object.entries(schema)) {
    if (c.test(value[name])) continue;
    return `${name} must be ${c.want}${c.why ? ` (${c.why(value[name])})` : ''}`;
  }
  return null;
}

// The engine options a request may run with (model.js #wanted), and a load's (engine/load.js).
const ENGINE = fields({ kv: optional(TEXT), numerics: optional(TEXT), layers: optional(NUMBER) });
const LOAD_OPTIONS = fields({
  kv: optional(TEXT),
  numerics: optional(TEXT),
  layers: optional(NUMBER),
  context: optional(NUMBER),
  gpu_kernels: optional(TEXT),
  maxBytes: optional(NUMBER),
});

/** A load's source (index.js toSource and handOver): its `kind` decides the other field. */
const SOURCE_KINDS = new Map([
  ['url', { url: TEXT }],
  ['bytes', { bytes: BYTES }],
  ['lent', { handle: HANDLE }],
  ['blob', { blob: BLOB }],
]);
const SOURCE = check(
  `a source of kind ${[...SOURCE_KINDS.keys()].join(', ')}`,
  (v) =>
    v !== null &&
    typeof v === 'object' &&
    SOURCE_KINDS.has(v.kind) &&
    fieldError(v, SOURCE_KINDS.get(v.kind)) === null,
);

/**
 * A complete request: options the core reads from their JSON (it checks each name and value),
 * so they must be JSON data of a bounded size. A BigInt (`seed: 10n ** 30n`) is not.
 */
const REQUEST_JSON = check(
  `an object of JSON data (at most ${MAX_REQUEST_JSON} characters)`,
  (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && jsonProblem(v) === null,
  (v) =>
    Array.isArray(v)
      ? 'an array'
      : v !== null && typeof v === 'object'
        ? jsonProblem(v).message
        : typeof v,
);

/**
 * Why `value` cannot go to the core as JSON (a BigInt, a cycle, too large), or null, with the
 * error's code: a request too large for the core's JSON parser holds a
 * text no context can take, so it is `context_full` as the core answers a long query (the caller
 * sent long text, not bad JSON); anything else is `invalid_argument`.
 */
function jsonProblem(value) {
  let text;
  try {
    text = JSON.stringify(value, (key, v) => {
      if (typeof v === 'bigint')
        throw new TypeError(`${key || 'a value'} is a BigInt, not a number`);
      return v;
    });
  } catch (e) {
    // a BigInt, a cycle, nesting deeper than the stack
    return { code: 'invalid_argument', message: e.message };
  }
  if (text !== undefined && text.length > MAX_REQUEST_JSON)
    return {
      code: 'context_full',
      message: `it is ${text.length} characters as JSON, more than ${MAX_REQUEST_JSON}: no context holds it`,
    };
  return null;
}

const PREFIX = { tools: TEXT, system: optional(TEXT), date: optional(TEXT) };
const NOTHING = {};

/** Each request type's fields (protocol.js Req says what they mean). */
const SCHEMAS = new Map([
  [Req.LOAD, { source: SOURCE, options: LOAD_OPTIONS }],
  [Req.COMPLETE, { engine: ENGINE, request: REQUEST_JSON }],
  [Req.PREFIX, { ...PREFIX, engine: optional(ENGINE) }],
  [
    Req.PREPARE,
    { ...PREFIX, key: optional(TEXT), snapshot: optional(BYTES), keep: optional(BOOLEAN) },
  ],
  [Req.SNAPSHOT, { bytes: BYTES }],
  [Req.RESET, NOTHING],
  [Req.INFO, NOTHING],
  [Req.TOKENIZE, { text: TEXT }],
  [Req.DETOKENIZE, { ids: IDS }],
  [Req.RENDER, { query: TEXT, tools: TEXT, system: optional(TEXT) }],
  [Req.LOGITS, { ids: IDS }],
  [Req.DISPOSE, NOTHING],
  // A page's prepare() and loadSnapshot(), run by the engine's own Needle: the page's client
  // sends the prefix as prepare() makes it (tools as JSON text), a snapshot as a URL or bytes.
  [Req.RELAYED_PREPARE, PREFIX],
  [Req.RELAYED_SNAPSHOT, { source: either(TEXT, BYTES) }],
]);

/** Whether `type` names a request (not `constructor` or another name every object has). */
export const isRequestType = (type) => typeof type === 'string' && SCHEMAS.has(type);

/**
 * Checks one request message `{ type, id, ...fields }` against its type's schema; throws
 * `invalid_argument` saying which field is wrong.
 */
export function checkRequest(msg) {
  if (msg === null || typeof msg !== 'object')
    throw new NeedleError('invalid_argument', 'a request must be an object');
  if (!Number.isSafeInteger(msg.id))
    throw new NeedleError('invalid_argument', 'a request needs a whole-number id');
  if (!isRequestType(msg.type)) {
    const type = typeof msg.type === 'string' ? msg.type : `of type ${typeof msg.type}`;
    throw new NeedleError('invalid_argument', `unknown request type ${type.slice(0, 80)}`);
  }
  const why = fieldError(msg, SCHEMAS.get(msg.type));
  if (why === null) return;
  const code = msg.type === Req.COMPLETE && jsonProblem(msg.request)?.code;
  throw new NeedleError(code || 'invalid_argument', `${msg.type}: ${why}`);
}
