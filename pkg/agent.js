// The agent loop, as upstream's `Needle.run`: ask, execute the calls on real functions, feed the
// results back as a tool-result turn, repeat until the model answers without calls.
//
//   const r = await needle.run('Turn on the kitchen light', {
//     tools: [{ name: 'set_light', description, parameters, fn: ({ room, on }) => lights.set(room, on) }],
//   });
//   r.results; // what the functions returned, in call order
//   r.steps;   // [{ function_calls, results, repeated }] per model answer that was executed
//
// Two differences from upstream's loop, both for the side effects the functions have: decoding is
// constrained unless asked otherwise (an unconstrained answer once passed {"room":"on"} to a
// function whose schema has no such room), and a call that repeats one already answered in this
// run (same tool, equal arguments) is not run again: the small model often asks for the call it
// has just been given the result of, which would repeat its effect (`repeatCalls: true` runs it).
import { NeedleError } from './protocol.js';
import { callKey } from './repeats.js';
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
 * answers without calls, answers with a call it already had the result of (that step's new calls
 * run, its repeats do not, and the run ends there), or `maxSteps` answers have been executed.
 * Resolves to the last answer with `results` (every executed call's result, in order) and `steps`
 * (each with `results` per call, a repeat's being the result it had, and `repeated`: the indices of
 * the calls not run again). An abort rejects with an AbortError carrying `steps` and `results` so
 * far (and `result`, when generation was cut).
 */
export async function runConversation(conversation, query, options = {}) {
  const {
    maxSteps = 8,
    strict = true,
    repeatCalls = false,
    constrained = true,
    signal,
    onStep,
    ...rest
  } = options;
  if (!(Number.isInteger(maxSteps) && maxSteps >= 0))
    throw new NeedleError('invalid_argument', 'maxSteps must be a whole number');
  if (typeof repeatCalls !== 'boolean')
    throw new NeedleError('invalid_argument', 'repeatCalls must be a boolean');
  const functions = conversation.functions;
  const steps = [];
  const results = [];
  const partial = () => ({ steps: steps.slice(), results: results.slice() });
  const withPartial = (e) => {
    if (e instanceof NeedleError && e.code === 'aborted') Object.assign(e, partial());
    return e;
  };
  const generate = (send) => send().catch((e) => Promise.reject(withPartial(e)));

  const turnOptions = { ...rest, constrained, signal };
  const answered = new Map(); // callKey -> the result that call got in this run
  let response = await generate(() => conversation.send(query, turnOptions));
  for (let step = 0; step < maxSteps; step++) {
    const calls = response.function_calls || [];
    if (response.type !== 'call' || calls.length === 0) break;
    const fabricated = ungroundedByTool(response);
    const stepResults = [];
    const repeated = [];
    for (const [i, call] of calls.entries()) {
      const key = callKey(call.name, call.arguments);
      if (!repeatCalls && answered.has(key)) {
        repeated.push(i);
        stepResults.push(answered.get(key));
        continue;
      }
      if (signal && signal.aborted) throw abortError(signal, partial());
      const result = await execute(
        call,
        functions,
        fabricated.get(call.name),
        strict,
        signal,
        partial,
      );
      answered.set(key, result);
      stepResults.push(result);
      results.push(result);
    }
    steps.push({ function_calls: calls, results: stepResults, repeated });
    if (onStep) onStep(steps[steps.length - 1]);
    if (signal && signal.aborted) throw abortError(signal, partial());
    if (repeated.length) break;
    response = await generate(() => conversation.sendResults(stepResults, turnOptions));
  }
  return { ...response, results, steps };
}
