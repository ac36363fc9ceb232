// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): extract()'s record type inferred
// from its schema (a tool or a bare JSON schema, inline or `as const`).
import { Needle, type FromSchema, type Tool } from 'needle-web';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Equal<A, B>) => ok;

const contact = {
  name: 'save_contact',
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      age: { type: 'integer', minimum: 0 },
      kind: { type: 'string', enum: ['friend', 'work'] },
      phones: { type: 'array', items: { type: 'string' } },
      address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    required: ['name', 'kind'],
  },
} as const satisfies Tool;

export async function extracts(needle: Needle) {
  const r = await needle.extract('Ann, a friend, 555-0101', contact);
  if (r) {
    const name: string = r.name;
    const kind: 'friend' | 'work' = r.kind;
    const age: number | undefined = r.age;
    const city: string | undefined = r.address?.city;
    const phones: string[] | undefined = r.phones;
    // @ts-expect-error an optional property may be absent
    const sure: number = r.age;
    // @ts-expect-error no such property
    void r.email;
    void [name, kind, age, city, phones, sure];
  }
  // A bare schema, written inline: inferred without `as const`.
  const note = await needle.extract('Buy milk', { type: 'object', properties: { text: { type: 'string' }, done: { type: 'boolean' } }, required: ['text'] });
  same<typeof note, { text: string; done?: boolean } | null>(true);
  // OpenAI style.
  const openai = await needle.extract('x', { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } } });
  same<typeof openai, { n: number } | null>(true);
  // By hand, as before.
  const typed = await needle.extract<{ room: string }>('Kitchen light on', '{"name":"x"}');
  same<typeof typed, { room: string } | null>(true);
  same<FromSchema<{ type: 'array'; items: { type: 'null' } }>, null[]>(true);
}
