// needle-web/webmcp: the tools a page declares through WebMCP (W3C Web Machine Learning CG draft;
// Chromium's `document.modelContext` behind --enable-features=WebMCP, or a polyfill such as
// @mcp-b/webmcp-polyfill) as tools `needle.run()` executes, so a page can put a "just type it"
// box over its own tools:
//
//   const r = await needle.run('Add milk to the list', { tools: await pageTools() });
//
// Both kinds come from `getTools()`: those registered with `registerTool({ name, description,
// inputSchema, execute })` and declarative `<form toolname tooldescription>` (the browser derives
// the schema from the fields). A call goes back through `executeTool(tool, args)`, so the page's
// own `execute` runs (or its form is filled, and submitted by the user or `toolautosubmit`).
import { NeedleError } from './protocol.js';

/** What `executeTool` resolved to: Chromium gives the result as JSON text, parsed back here. */
function resultValue(value) {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // an execute that returned a plain string
  }
}

/** One WebMCP tool as a `run()` tool: its schema for the model, its execution through the page. */
function runTool(modelContext, tool, confirm) {
  if (!tool || typeof tool.name !== 'string' || !tool.name)
    throw new NeedleError('invalid_argument', 'a WebMCP tool has no name');
  const parameters =
    tool.inputSchema && typeof tool.inputSchema === 'object'
      ? tool.inputSchema
      : { type: 'object', properties: {} };
  return {
    name: tool.name,
    description: typeof tool.description === 'string' ? tool.description : '',
    parameters,
    fn: async (args) => {
      if (confirm && !(await confirm(tool, args))) return { error: 'declined by the user' };
      return resultValue(await modelContext.executeTool(tool, args));
    },
  };
}

/**
 * The page's WebMCP tools as `{ name, description, parameters, fn }` for `needle.run()`.
 * `modelContext`: `document.modelContext` by default, or anything with its `getTools()` and
 * `executeTool(tool, args)` (the extension passes one that reaches into a tab). `confirm(tool,
 * args)`, when given, is asked before each execution; a false answer makes the call's result
 * `{ error: 'declined by the user' }` without running it. No WebMCP: rejects with `unsupported`.
 */
export async function pageTools(modelContext = globalThis.document?.modelContext, options = {}) {
  if (
    !modelContext ||
    typeof modelContext.getTools !== 'function' ||
    typeof modelContext.executeTool !== 'function'
  )
    throw new NeedleError('unsupported', 'no WebMCP here (document.modelContext is missing)');
  const { confirm } = options;
  if (confirm !== undefined && typeof confirm !== 'function')
    throw new NeedleError('invalid_argument', 'confirm must be a function');
  const tools = await modelContext.getTools();
  if (!Array.isArray(tools))
    throw new NeedleError('invalid_argument', 'modelContext.getTools() gave no array');
  return tools.map((tool) => runTool(modelContext, tool, confirm));
}
