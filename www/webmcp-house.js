// The demo's house through WebMCP: where the page has `document.modelContext` (Chromium with
// WebMCP on), the smart-home environment's tools are registered as the page's own tools, executed
// by the same functions the Agent tab calls, so another agent in the browser (the extension's
// "this page's tools", or any WebMCP client) can drive the same house.

/** Registers `env`'s tools, run by `functions` (by tool name); returns how many (0: no WebMCP). */
export function registerHouseTools(env, functions) {
  const context = document.modelContext;
  if (!context || typeof context.registerTool !== 'function') return 0;
  for (const tool of env.tools) {
    context.registerTool({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters,
      annotations: { readOnlyHint: false }, // every one changes the house
      execute: (args) => functions[tool.name](args),
    });
  }
  return env.tools.length;
}
