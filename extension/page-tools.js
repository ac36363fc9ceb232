// "This page's tools": the WebMCP tools the target tab declares (document.modelContext, native
// or the page's polyfill), reached through scripts run in the page's own world, so a call runs the
// page's own execute (or fills its form). The popup hands this to pageTools() (pkg/webmcp.js).

/** Runs `func(...args)` in the tab's main world; its value, or its error thrown here. */
async function inPage(tabId, func, args = []) {
  const [injection] = await chrome.scripting.executeScript({
    target: { tabId },
    world: 'MAIN',
    func,
    args,
  });
  const out = injection?.result;
  if (!out || 'error' in out) throw new Error(out?.error ?? 'the page did not answer');
  return out.value;
}

// These two run inside the page: only what they are given, nothing from this module's scope.
async function listTools() {
  try {
    const context = document.modelContext;
    if (!context) return { value: '[]' };
    const tools = await context.getTools();
    // As JSON text: the extension's result passing sorts object keys, and the schemas' key order
    // is part of what the model reads.
    const fields = tools.map(({ name, description, inputSchema, annotations }) => ({
      name,
      description,
      inputSchema,
      annotations,
    }));
    return { value: JSON.stringify(fields) };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}

async function executeTool(name, args) {
  try {
    const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
    if (!tool) return { error: `the page has no tool ${name} now` };
    return { value: await document.modelContext.executeTool(tool, args) };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}

/** A model context (getTools, executeTool) for tab `tabId`, as pageTools() takes it. */
export function tabModelContext(tabId) {
  return {
    getTools: async () => JSON.parse(await inPage(tabId, listTools)),
    executeTool: (tool, args) => inPage(tabId, executeTool, [tool.name, args]),
  };
}

/** Tools annotated read-only run at once; the others wait for the user's confirm. */
export const readOnly = (tool) => tool.annotations?.readOnlyHint === true;
