// Structured output: a value that parses and validates against any JSON Schema the matcher can hold
// (objects, arrays, enums, nested, numbers within bounds, string lengths, patterns and formats,
// nullable types, unions it can tell apart, $ref). The schema is the one tool, called (the refusal
// masked), and the engine's full-schema decoding holds the call's arguments to the whole schema; a
// schema that is not an object is the `value` of a wrapper object, which takes its $defs so its
// $refs still resolve. A keyword the matcher cannot hold (allOf, a recursive $ref, …) rejects with
// code 'unsupported', naming where it is.
//
//   const { colour, count } = await needle.generate('two red apples', {
//     schema: { type: 'object', properties: { colour: { enum: ['red', 'green'] }, count: { type: 'integer', minimum: 0 } },
//               required: ['colour', 'count'] },
//   });
import { NeedleError } from './protocol.js';

/**
 * `{tool, read, wrapped}`: the tool a schema becomes, how to read the value back from the call's
 * arguments, and whether the value is wrapped (a schema that is not an object's).
 */
export function schemaTool(schema, name = 'respond', description = undefined) {
  if (typeof schema === 'string') {
    try {
      schema = JSON.parse(schema);
    } catch (e) {
      throw new NeedleError('bad_json', `schema is not JSON: ${e.message}`);
    }
  }
  if (schema === true || (schema && typeof schema === 'object' && !Array.isArray(schema))) {
    const isObject =
      schema !== true &&
      (schema.type === 'object' || (schema.type === undefined && schema.properties));
    const tool = { name: typeof schema.title === 'string' ? schema.title : name };
    const desc = description ?? schema.description;
    if (typeof desc === 'string') tool.description = desc;
    const defs = {};
    for (const key of ['$defs', 'definitions']) if (schema[key]) defs[key] = schema[key];
    tool.parameters = isObject
      ? schema
      : { type: 'object', properties: { value: schema }, required: ['value'], ...defs };
    return { tool, wrapped: !isObject, read: isObject ? (args) => args : (args) => args.value };
  }
  throw new NeedleError('invalid_argument', 'schema must be a JSON Schema object');
}

/** The value of a full-schema result: its one call's arguments, read back; typed errors otherwise. */
export function structuredValue(result, read) {
  const call = result.function_calls[0] ?? (result.suppressed_calls || [])[0];
  if (call) return read(call.arguments ?? {});
  if (result.stop_reason === 'max_tokens' || result.stop_reason === 'context_full') {
    throw new NeedleError(
      'incomplete',
      `the value was cut off (${result.stop_reason}): raise maxTokens`,
      { result },
    );
  }
  throw new NeedleError('incomplete', 'the model wrote no value', { result });
}

/** `needle.generate(text, { schema, ...complete options })`: the value. */
export async function generate(needle, text, options = {}) {
  const { schema, name, tools: _tools, ...rest } = options ?? {};
  if (schema === undefined)
    throw new NeedleError(
      'invalid_argument',
      'generate() needs a schema (use complete() for free text)',
    );
  const { tool, read } = schemaTool(schema, name);
  const result = await needle.complete(String(text), {
    ...rest,
    tools: [tool],
    constrained: true,
    requireCall: true,
    fullSchema: true,
  });
  return structuredValue(result, read);
}
