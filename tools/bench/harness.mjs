// One benchmark run of a needle-web wasm build, shared by the Node host (node.mjs) and the
// Chromium worker (worker.mjs): the same steps and the same records as `needle bench` (the
// native CLI), one object per measurement:
//   { kind: 'load', load_ms }                         bytes in hand -> Session ready
//   { kind: 'request', name, prompt_tokens, prefill_ms, ttft_ms, decode_ms, decoded, stop, kv_bytes }
//   { kind: 'memory', peak_bytes }                    wasm linear memory (it never shrinks)
// `glue` is an initialised wasm-bindgen module namespace, `memory` its WebAssembly.Memory.

/** Runs `requests` ({name, query, system, tools, max_tokens}) in one session, in order.
 * `numerics`: "exact" | "deploy" (undefined: exact). */
export function runBench({
  glue,
  memory,
  bytes,
  requests,
  kv,
  numerics,
  now = () => performance.now(),
}) {
  const records = [];
  const t0 = now();
  const session = new glue.Session(bytes, JSON.stringify({ kv, numerics }));
  records.push({ kind: 'load', load_ms: now() - t0 });
  try {
    for (const r of requests) records.push(runRequest(session, r, now));
  } finally {
    records.push({ kind: 'memory', peak_bytes: memory.buffer.byteLength });
    session.free();
  }
  return records;
}

function runRequest(session, r, now) {
  const t0 = now();
  // Greedy, the core's defaults otherwise; the whole prompt in one prefill call, as the CLI runs it.
  const request = {
    query: r.query,
    tools: r.tools,
    system: r.system ?? null,
    maxTokens: r.max_tokens,
  };
  const promptTokens = session.start(JSON.stringify(request));
  session.prefill(2 ** 32 - 1);
  const prefillMs = now() - t0;
  // The first token comes from the prefill's logits; each later one runs a forward step.
  const first = session.next();
  const ttftMs = now() - t0;
  let decoded = 0;
  const t1 = now();
  if (first !== undefined) while (session.next() !== undefined) decoded++;
  const decodeMs = now() - t1;
  const { stop_reason } = JSON.parse(session.finish());
  return {
    kind: 'request',
    name: r.name,
    prompt_tokens: promptTokens,
    prefill_ms: prefillMs,
    ttft_ms: ttftMs,
    decode_ms: decodeMs,
    decoded,
    stop: stop_reason,
    kv_bytes: session.kv_bytes(),
  };
}
