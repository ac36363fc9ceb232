// Test pages that declare an environment's tools through WebMCP (tests/e2e/webmcp.test.mjs and
// extension-acts.test.mjs): imperatively with document.modelContext.registerTool, or declaratively
// as one <form toolname toolautosubmit> per tool. Every execution and form submission is pushed
// to window.webmcpLog as { tool, args } (a form's args are its submitted fields).
const escape = (s) =>
  String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

const HEAD = '<!doctype html><meta charset="utf-8"><title>WebMCP test page</title>';

/** `env`'s tools registered with registerTool; those named in `readOnly` annotated read-only. */
export function imperativePage(env, { readOnly = [] } = {}) {
  const tools = env.tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.parameters,
    annotations: { readOnlyHint: readOnly.includes(t.name) },
  }));
  return `${HEAD}<body><script type="module">
const log = (window.webmcpLog = []);
for (const tool of ${JSON.stringify(tools)}) {
  document.modelContext?.registerTool({ ...tool, execute: (args) => (log.push({ tool: tool.name, args }), { done: tool.name }) });
}
document.body.dataset.ready = 'true';
</script></body>`;
}

/** One field of a declarative tool's form: a select for an enum, else an input. */
function field(name, schema, required) {
  const attrs = `name="${escape(name)}" toolparamdescription="${escape(schema.description ?? '')}"${required ? ' required' : ''}`;
  if (schema.enum)
    return `<select ${attrs}>${schema.enum.map((v) => `<option>${escape(v)}</option>`).join('')}</select>`;
  const type = schema.type === 'integer' || schema.type === 'number' ? 'number' : 'text';
  return `<input type="${type}" ${attrs}>`;
}

/** `env`'s tools as declarative forms that submit themselves when an agent fills them. */
export function declarativePage(env) {
  const forms = env.tools.map((t) => {
    const required = new Set(t.parameters.required ?? []);
    const fields = Object.entries(t.parameters.properties ?? {}).map(([n, s]) => field(n, s, required.has(n)));
    return `<form toolname="${escape(t.name)}" tooldescription="${escape(t.description)}" toolautosubmit>${fields.join('')}<button>Send</button></form>`;
  });
  return `${HEAD}<body>${forms.join('\n')}<script type="module">
const log = (window.webmcpLog = []);
for (const form of document.forms) {
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const args = Object.fromEntries(new FormData(form));
    log.push({ tool: form.getAttribute('toolname'), args, agentInvoked: e.agentInvoked === true });
    e.respondWith?.(Promise.resolve({ done: form.getAttribute('toolname') }));
  });
}
document.body.dataset.ready = 'true';
</script></body>`;
}
