// Tools that may carry their implementation: the schemas the model sees, split from the functions
// the agent loop calls.
//
//   [{ name, description, parameters, fn }]                      a flat schema with its function
//   [{ type: 'function', function: {...}, fn }]                  an OpenAI-style one with its function
//   [schema, schema, { set_light: fn, set_thermostat: fn }]      a name -> function map beside schemas
import { NeedleError } from './protocol.js';

/** The name a schema declares (flat or OpenAI style), or undefined. */
export function toolName(schema) {
  if (!schema || typeof schema !== 'object') return undefined;
  const fn =
    schema.type === 'function' && schema.function && typeof schema.function === 'object'
      ? schema.function
      : schema;
  return typeof fn.name === 'string' ? fn.name : undefined;
}

/** A plain object whose every value is a function: a `{name: fn}` map. */
function isFunctionMap(entry) {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return false;
  const values = Object.values(entry);
  return values.length > 0 && values.every((v) => typeof v === 'function');
}

/**
 * `{schemas, functions}` of a tools option. `schemas` keeps the given order and each schema's
 * key order, without `fn`; JSON text passes through unchanged (no functions). A function without
 * a schema is an error: the model could never call it.
 */
export function splitTools(tools) {
  if (tools === undefined || tools === null) return { schemas: [], functions: new Map() };
  if (typeof tools === 'string') return { schemas: tools, functions: new Map() };
  if (!Array.isArray(tools))
    throw new NeedleError('invalid_argument', 'tools must be an array (or JSON text)');
  const schemas = [];
  const functions = new Map();
  const bind = (name, fn) => {
    if (functions.has(name))
      throw new NeedleError('invalid_argument', `two functions for tool ${name}`);
    functions.set(name, fn);
  };
  for (const entry of tools) {
    if (typeof entry === 'function') {
      throw new NeedleError(
        'invalid_argument',
        `function ${entry.name || '(anonymous)'} needs a schema: pass {name, description, parameters, fn}`,
      );
    }
    if (isFunctionMap(entry)) {
      for (const [name, fn] of Object.entries(entry)) bind(name, fn);
      continue;
    }
    if (entry && typeof entry === 'object' && 'fn' in entry) {
      const { fn, ...schema } = entry;
      const name = toolName(schema);
      if (typeof fn !== 'function')
        throw new NeedleError('invalid_argument', `tool ${name}: fn is not a function`);
      if (name === undefined)
        throw new NeedleError('invalid_argument', 'a tool with fn has no name');
      bind(name, fn);
      schemas.push(schema);
    } else {
      schemas.push(entry);
    }
  }
  const named = new Set(schemas.map(toolName));
  for (const name of functions.keys()) {
    if (!named.has(name))
      throw new NeedleError('invalid_argument', `function ${name} has no schema among the tools`);
  }
  return { schemas, functions };
}

/** A response's `validation.ungrounded` names (`tool.path`) as tool -> Set of paths. */
export function ungroundedByTool(response) {
  const byTool = new Map();
  for (const name of (response.validation && response.validation.ungrounded) || []) {
    const text = String(name);
    const dot = text.indexOf('.');
    const tool = dot < 0 ? text : text.slice(0, dot);
    if (!byTool.has(tool)) byTool.set(tool, new Set());
    byTool.get(tool).add(dot < 0 ? text : text.slice(dot + 1));
  }
  return byTool;
}
