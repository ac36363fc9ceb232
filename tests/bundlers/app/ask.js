// Runs the page's one query and reports it on <body data-outcome> (JSON) for the test to read.
export async function ask(load, environment) {
  const query = new URLSearchParams(location.search).get('q') || 'Turn on the kitchen lights';
  const out = document.getElementById('out');
  let outcome;
  try {
    const needle = await load();
    const result = await needle.complete(query, { ...environment, maxTokens: 256 });
    const { thread, variant, threads } = needle.info;
    outcome = { result, thread, variant, threads, isolated: globalThis.crossOriginIsolated === true, cores: navigator.hardwareConcurrency };
    out.textContent = JSON.stringify(result.function_calls, null, 2);
    needle.dispose();
  } catch (e) {
    outcome = { error: { code: e.code, message: e.message } };
    out.textContent = `${e.code}: ${e.message}`;
  }
  document.body.dataset.outcome = JSON.stringify(outcome);
}
