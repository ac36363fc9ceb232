// The agent loop, as upstream's `Needle.run`: ask, execute the calls on real functions, feed the
// results back as a tool-result turn, repeat until the model answers without calls.
//
//   const r = await needle.run('Turn on the kitchen light', {
//     tools: [{ name: 'set_light', description, parameters, fn: ({ room, on }) => lights.set(room, on) }],
//   });
//   r.results; // what the functions returned, in call order
//   r.steps;   // [{ function_calls, results }] per model answer that was executed
import { NeedleError } from './protocol.js';
import { ungroundedByTool } from './tools.js';

function abortError(signal, partial) {
  const reason = signal.reason;
  const message = reason instanceof Error ? reason.message : 'run aborted';
  return new NeedleError('aborted', message, partial);
}

/** Resolves to `promise`'s value, or rejects as soon as `signal` aborts. */
function untilAborted(promise, signal, partial) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, partial()));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, partial()));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}

/** One call's result: the function's value, or `{error}` (upstream's shapes). */
async function execute(call, functions, fabricated, strict, signal, partial) {
  if (strict && fabricated && fabricated.size)
    return { error: `ungrounded ${[...fabricated].sort().join(', ')}` };
  const fn = functions.get(call.name);
  if (!fn) return { error: `unknown tool: ${call.name}` };
  try {
    return await untilAborted(
      Promise.resolve().then(() => fn(call.arguments ?? {}, { signal, call })),
      signal,
      partial,
    );
  } catch (e) {
    if (e instanceof NeedleError && e.code === 'aborted' && signal && signal.aborted) throw e;
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * Runs `query` in `conversation` (a Conversation whose tools carry functions) until the model
 * answers without calls or `maxSteps` answers have been executed. Resolves to the last answer
 * with `results` (every executed call's result, in order) and `steps`. An abort rejects with an
 * AbortError carrying `steps` and `results` so far (and `result`, when generation was cut).
 */
export async function runConversation(conversation, query, options = {}) {
  const { maxSteps = 8, strict = true, signal, onStep, ...rest } = options;
  if (!(Number.isInteger(maxSteps) && maxSteps >= 0))
    throw new NeedleError('invalid_argument', 'maxSteps must be a whole number');
  const functions = conversation.functions;
  const steps = [];
  const results = [];
  const partial = () => ({ steps: steps.slice(), results: results.slice() });
  const withPartial = (e) => {
    if (e instanceof NeedleError && e.code === 'aborted') Object.assign(e, partial());
    return e;
  };
  const generate = (send) => send().catch((e) => Promise.reject(withPartial(e)));

  const turnOptions = { ...rest, signal };
  let response = await generate(() => conversation.send(query, turnOptions));
  for (let step = 0; step < maxSteps; step++) {
    const calls = response.function_calls || [];
    if (response.type !== 'call' || calls.length === 0) break;
    const fabricated = ungroundedByTool(response);
    const stepResults = [];
    for (const call of calls) {
      if (signal && signal.aborted) throw abortError(signal, partial());
      stepResults.push(
        await execute(call, functions, fabricated.get(call.name), strict, signal, partial),
      );
    }
    steps.push({ function_calls: calls, results: stepResults });
    results.push(...stepResults);
    if (onStep) onStep(steps[steps.length - 1]);
    if (signal && signal.aborted) throw abortError(signal, partial());
    response = await generate(() => conversation.sendResults(stepResults, turnOptions));
  }
  return { ...response, results, steps };
}
