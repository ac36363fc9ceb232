// Which fields of an OpenAI chat-completions request the engine honours. Every other field is
// refused (its result could not be what the caller asked for) or reported through the logger
// (it changes nothing the engine could do otherwise); none is dropped silently.
import { NeedleError } from './protocol.js';

/** Fields create() reads. */
const HONOURED = new Set([
  'model',
  'messages',
  'tools',
  'tool_choice',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'seed',
  'top_p',
  'top_k',
  'n',
  'stream',
  'stream_options',
  'response_format',
  'stop',
]);

/** Fields whose request the engine cannot meet: a typed error, with why. */
const REFUSED = {
  logprobs: 'Needle returns no log-probabilities',
  top_logprobs: 'Needle returns no log-probabilities',
  frequency_penalty: 'Needle samples without repetition penalties',
  presence_penalty: 'Needle samples without repetition penalties',
  logit_bias: 'Needle samples without logit biases',
  audio: 'Needle reads and writes text only',
  modalities: 'Needle reads and writes text only',
  prediction: 'Needle has no predicted outputs',
};

/** A refused field set to its no-op value is no request at all. */
function isNoOp(key, value) {
  if (value === undefined || value === null || value === false) return true;
  if ((key === 'frequency_penalty' || key === 'presence_penalty') && value === 0) return true;
  if (key === 'top_logprobs' && value === 0) return true;
  if (key === 'logit_bias' && typeof value === 'object' && Object.keys(value).length === 0)
    return true;
  if (key === 'modalities' && Array.isArray(value) && value.every((m) => m === 'text')) return true;
  return false;
}

/** Refuses what cannot be honoured; warns, through `log`, about fields it leaves unused. */
export function checkFields(body, log) {
  for (const [key, value] of Object.entries(body)) {
    if (HONOURED.has(key)) continue;
    if (key in REFUSED) {
      if (isNoOp(key, value)) continue;
      throw new NeedleError('unsupported', `${key}: ${REFUSED[key]}`);
    }
    if (value !== undefined) log.warn(`chat.completions.create: ${key} is not used by Needle`);
  }
  if ((body.n ?? 1) !== 1)
    throw new NeedleError('unsupported', 'n: Needle writes one choice per request (n must be 1)');
}

/** The stop sequences of a request: up to 4 non-empty strings. */
export function stopSequences(stop) {
  if (stop === undefined || stop === null) return [];
  const list = typeof stop === 'string' ? [stop] : stop;
  if (
    !Array.isArray(list) ||
    list.length > 4 ||
    list.some((s) => typeof s !== 'string' || s === '')
  ) {
    throw new NeedleError(
      'invalid_argument',
      'stop must be a non-empty string or an array of at most 4 of them',
    );
  }
  return list;
}

/** `text` cut before the first stop sequence, and whether one was found. */
export function cutAtStop(text, stops) {
  let at = -1;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  return at < 0 ? { text, stopped: false } : { text: text.slice(0, at), stopped: true };
}

/** Text that may be the start of a stop sequence, at the end of `text` (held back when streaming). */
export function stopPrefixLength(text, stops) {
  let longest = 0;
  for (const s of stops) {
    for (let n = Math.min(s.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(s.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}
