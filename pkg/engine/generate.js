// The generate job of the engine host: one request through a loaded session, the prompt in
// chunks and then token by token, with a look at the message loop between any two steps so an
// abort stops it at once. This is the decode loop; the core's step functions are
// `Engine::begin`, `Engine::prefill` and `Engine::next_token` (src/session/engine.rs).
import { Reply, NeedleError } from '../protocol.js';

// Yields to the event loop so a queued `abort` message is handled between two tokens. A
// MessageChannel round trip is a task without setTimeout's 4 ms clamp.
export const yieldNow = (() => {
  if (typeof setImmediate === 'function') return () => new Promise((r) => setImmediate(r));
  if (typeof MessageChannel === 'function') {
    const ch = new MessageChannel();
    const waiting = [];
    ch.port1.onmessage = () => waiting.shift()();
    return () =>
      new Promise((r) => {
        waiting.push(r);
        ch.port2.postMessage(0);
      });
  }
  return () => new Promise((r) => setTimeout(r, 0));
})();

// About how long one prefill chunk runs before the worker looks for an abort: the bound on an
// abort's latency during a prefill. The chunk's token count follows the engine's speed (it
// differs by build, position and model), so the bound holds on every engine. Each call also
// streams the weights once, so smaller chunks cost prefill speed: at the shipped Needle 3
// geometry (SIMD) 4-token chunks took twice as long as one call, 16-token ones as long.
const PREFILL_CHUNK_MS = 120;

/** The next chunk's token count, from the last one's: `tokens` ran in `ms`. */
export function nextChunk(tokens, ms) {
  const scale = Math.min(2, PREFILL_CHUNK_MS / Math.max(ms, 1));
  return Math.max(1, Math.min(1024, Math.floor(tokens * scale)));
}

export const now = () => (globalThis.performance ? performance.now() : Date.now());

/**
 * Runs `request` (the options object the core reads) on `s`, a loaded engine's session, whose
 * steps go through `call` (call.js: suspending on the gpu build): the prompt in chunks, then the
 * decode loop, one token per step; `send` posts a reply to the client, `aborted()` tells whether
 * an abort for this request arrived (looked at between any two steps, never during one).
 * Resolves to the result; an abort rejects with an AbortError carrying it.
 */
export async function generate(s, call, id, request, { send, aborted }) {
  const stopped = async () => {
    await yieldNow(); // lets an `abort` for this request arrive
    if (aborted()) s.abort();
    return aborted();
  };
  const t0 = now();
  // A number JSON cannot write (NaN, Infinity) goes as text, so the core refuses it as mistyped
  // rather than reading null (its default).
  await call(
    s,
    'start',
    JSON.stringify(request, (_k, v) =>
      typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
    ),
  );
  // Chunk by chunk, so an abort (or an inline dispose, which aborts first) stops a long prefill.
  let wasAborted = false;
  for (let chunk = 1, done = false; !done && !wasAborted; ) {
    const t = now();
    done = await call(s, 'prefill', chunk);
    chunk = nextChunk(chunk, now() - t);
    wasAborted = await stopped();
  }
  const prefillMs = now() - t0;
  let decodeMs = 0;
  while (!wasAborted) {
    wasAborted = await stopped();
    if (wasAborted) break;
    const t = now();
    const tok = await call(s, 'next');
    decodeMs += now() - t;
    if (tok === undefined || tok === null) break;
    send({ type: Reply.TOKEN, id, token: tok.id, text: tok.text });
  }
  const t = now();
  // The core's envelope, the same JSON `needle run --json` prints.
  const c = JSON.parse(await call(s, 'finish'));
  decodeMs += now() - t;
  const result = toResult(c, { prefillMs, decodeMs }, s.kv_bytes());
  // An abort that arrived after the model had already stopped changes nothing.
  if (wasAborted && c.stop_reason === 'aborted')
    throw new NeedleError('aborted', 'generation aborted', { result });
  return result;
}

/** The result complete() resolves to, from the core's envelope `c` and this host's timings. */
function toResult(c, { prefillMs, decodeMs }, kvBytes) {
  return {
    function_calls: c.function_calls,
    reasoning: c.reasoning ?? null,
    confidence: c.confidence ?? null,
    text: c.text,
    stop_reason: c.stop_reason,
    usage: c.usage,
    timings: {
      prefill_ms: prefillMs,
      decode_ms: decodeMs,
      tokens_per_s: decodeMs > 0 ? (c.tokens.length * 1000) / decodeMs : 0,
    },
    type: c.type,
    validation: c.validation,
    parse_error: c.parse_error ?? null,
    tokens: c.tokens,
    kv_bytes: kvBytes,
  };
}
