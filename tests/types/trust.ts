// Compiled by tests/js/types-trust.test.mjs (tsc --noEmit --strict): issue 50's type fixes. Untyped
// `enum`/`const` (the pizza example the README had), the schemas tool parameters may hold at run time
// (anyOf, type lists, $ref). The AI SDK provider's types: ai-sdk.ts.
import { Needle, type FromSchema, type Tool } from 'needle-web';

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Equal<A, B>) => ok;

export async function pizza(needle: Needle) {
  // Issue 50's pizza example (pkg/README.md's Structured output example until then): `size` has
  // no `type`.
  const order = await needle.generate('Two large pizzas to 12 Elm St', {
    schema: {
      type: 'object',
      properties: {
        size: { enum: ['small', 'medium', 'large'] },
        count: { type: 'integer', minimum: 1, maximum: 20 },
        street: { type: 'string', maxLength: 40 },
        zip: { type: 'string', pattern: '^\\d{5}$' },
      },
      required: ['size', 'count'],
    },
  });
  same<typeof order, { size: 'small' | 'medium' | 'large'; count: number; street?: string; zip?: string }>(true);
  const size: 'small' | 'medium' | 'large' = order.size;
  return size;
}

export function untyped() {
  same<FromSchema<{ const: 'card' }>, 'card'>(true);
  same<FromSchema<{ enum: readonly [1, 'two', null] }>, 1 | 'two' | null>(true);
  same<FromSchema<{ type: 'string'; const: 'x' }>, 'x'>(true);
  same<FromSchema<{ type: readonly ['string', 'null'] }>, string | null>(true);
  same<FromSchema<{ anyOf: readonly [{ type: 'integer' }, { type: 'null' }] }>, number | null>(true);
  same<
    FromSchema<{
      oneOf: readonly [
        { type: 'object'; properties: { kind: { const: 'card' } }; required: readonly ['kind'] },
        { type: 'object'; properties: { kind: { const: 'cash' } }; required: readonly ['kind'] },
      ];
    }>,
    { kind: 'card' } | { kind: 'cash' }
  >(true);
  same<FromSchema<{ $ref: '#/$defs/Address' }>, unknown>(true);
}

// What zod 4's toJSONSchema writes for z.object({ note: z.string().nullable(), tag: z.literal('a') }).
const zodLike = {
  name: 'save_note',
  parameters: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      tag: { type: 'string', const: 'a' },
      when: { type: ['string', 'null'], format: 'date' },
      address: { $ref: '#/$defs/Address' },
      tags: { type: 'array', items: { enum: ['a', 'b'] }, uniqueItems: true },
    },
    required: ['note', 'tag'],
    additionalProperties: false,
    $defs: { Address: { type: 'object', properties: { city: { type: 'string' } } } },
  },
} as const satisfies Tool;

// @ts-expect-error an untyped enum still takes no misspelled key
const typo: Tool = { name: 'x', parameters: { type: 'object', properties: { a: { enum: ['x'], descripton: 'oops' } } } };
// @ts-expect-error anyOf holds schemas
const badAnyOf: Tool = { name: 'x', parameters: { type: 'object', properties: { a: { anyOf: ['string'] } } } };
// @ts-expect-error a type list names JSON types
const badList: Tool = { name: 'x', parameters: { type: 'object', properties: { a: { type: ['text'] } } } };

export async function tools(needle: Needle) {
  const r = await needle.complete('Save a note', { tools: [zodLike], constrained: true });
  const name: 'save_note' = r.function_calls[0].name;
  const note = await needle.extract('Note: buy milk', zodLike);
  if (note) same<typeof note.note, string | null>(true);
  return [name, typo, badAnyOf, badList];
}
