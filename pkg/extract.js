// One-shot structured extraction, as upstream's `extract`: the schema is the only tool, the record
// is the arguments of the model's call.
//
//   const event = await needle.extract('Lunch with Ana on 3 May 2027 at noon', {
//     name: 'calendar_event', parameters: { type: 'object', properties: { title: {...}, date: { type: 'string', format: 'date' } } },
//   });
import { NeedleError } from './protocol.js';
import { toolName, ungroundedByTool } from './tools.js';
import { AUTO_DATE_DEFAULT, dateFact } from './conversation.js';
import { schemaTool } from './structured.js';

/** A tool schema for `schema`: a named tool as given, or a bare JSON Schema wrapped as one. */
function asTool(schema) {
  if (typeof schema === 'string') {
    try {
      schema = JSON.parse(schema);
    } catch (e) {
      throw new NeedleError('bad_json', `schema is not JSON: ${e.message}`);
    }
  }
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new NeedleError(
      'invalid_argument',
      'schema must be a tool ({name, parameters}) or a JSON Schema object',
    );
  }
  if (toolName(schema) !== undefined) return schema;
  const tool = { name: typeof schema.title === 'string' ? schema.title : 'extract' };
  if (typeof schema.description === 'string') tool.description = schema.description;
  tool.parameters = schema;
  return tool;
}

/** `{tool, read}` for full-schema extraction: a named tool as given, else any JSON Schema. */
function fullSchemaTool(schema) {
  if (schema && typeof schema === 'object' && toolName(schema) !== undefined)
    return { tool: schema, read: (a) => a };
  return schemaTool(schema, 'extract');
}

/** The paths a strict extraction rejects: the engine's ungrounded values and a negated request. */
function failures(result) {
  const paths = new Set([...ungroundedByTool(result).values()].flatMap((set) => [...set]));
  if (result.validation && result.validation.negation) paths.add('negated request');
  return [...paths].sort();
}

/**
 * Resolves to the record (the arguments of the model's single call), or null when the model
 * declines. With `strict` (default), values the engine finds ungrounded in the text (a year the
 * text contradicts, a number it never wrote) or a negated request reject with a NeedleError whose
 * code is `ungrounded`, with `paths` and the `result`. Constrained decoding is on by default.
 * With `fullSchema`, the record is held to the whole schema (structured.js), which may be any JSON
 * Schema (an array, an enum, …) the matcher can hold.
 */
export async function extract(needle, text, schema, options = {}) {
  const {
    strict = true,
    autoDate = AUTO_DATE_DEFAULT,
    constrained = true,
    fullSchema = false,
    tools: _tools,
    ...rest
  } = options;
  const { tool, read } = fullSchema
    ? fullSchemaTool(schema)
    : { tool: asTool(schema), read: (a) => a };
  const result = await needle.complete(String(text), {
    ...rest,
    tools: [tool],
    constrained,
    fullSchema,
    date: autoDate ? dateFact() : undefined,
  });
  const calls = result.function_calls ?? [];
  if (calls.length === 0) return null;
  const record = read(calls[0].arguments ?? {});
  if (strict) {
    const paths = failures(result);
    if (paths.length) {
      throw new NeedleError(
        'ungrounded',
        `extraction returned values not grounded in the input: ${paths.join(', ')}`,
        { paths, result },
      );
    }
  }
  return record;
}
