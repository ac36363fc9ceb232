// Types for needle-web/webmcp: a page's WebMCP tools as tools `needle.run()` executes.
import type { FunctionDefinition, ObjectSchema, ToolFunction } from './index.js';

/** A tool as WebMCP's `getTools()` lists it (imperative `registerTool` or a `<form toolname>`). */
export interface WebMcpTool {
  name: string;
  description?: string;
  /** Its JSON schema (for a form, derived by the browser from the fields). */
  inputSchema?: Record<string, unknown>;
  /** The hints `registerTool` was given; none on a declarative form. */
  annotations?: { readOnlyHint?: boolean; [hint: string]: unknown };
}

/** What `pageTools` needs of `document.modelContext`. */
export interface ModelContextLike {
  getTools(): WebMcpTool[] | Promise<WebMcpTool[]>;
  /** Runs the page's `execute` (or fills its form); resolves to the result (Chromium: JSON text). */
  executeTool(tool: WebMcpTool, args: Record<string, unknown>): Promise<unknown>;
}

export interface PageToolsOptions {
  /** Asked before each execution; false: the call's result is `{ error: 'declined by the user' }`. */
  confirm?: (tool: WebMcpTool, args: Record<string, unknown>) => boolean | Promise<boolean>;
}

/** A page tool for `needle.run()`'s `tools`: schema for the model, `fn` through `executeTool`. */
export interface PageTool extends FunctionDefinition {
  description: string;
  /** The page's schema as given (`{ type: 'object', properties: {} }` when it has none). */
  parameters: ObjectSchema;
  fn: ToolFunction;
}

/**
 * The page's WebMCP tools (default `document.modelContext`), each executed through the page's
 * `executeTool`. Rejects with code `unsupported` where there is no WebMCP.
 */
export function pageTools(modelContext?: ModelContextLike, options?: PageToolsOptions): Promise<PageTool[]>;
