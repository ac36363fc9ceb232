// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): generate()'s value typed from its
// schema, the new chat.completions fields, and the AI SDK provider's types.
import { Needle } from 'needle-web';
import { createNeedle, type NeedleLanguageModel } from 'needle-web/ai-sdk';

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Equal<A, B>) => ok;

export async function check(needle: Needle) {
  const order = await needle.generate('two large pizzas', {
    schema: {
      type: 'object',
      properties: {
        size: { type: 'string', enum: ['small', 'large'] },
        count: { type: 'integer', minimum: 1 },
      },
      required: ['size'],
    },
    maxTokens: 64,
  });
  same<typeof order, { size: 'small' | 'large'; count?: number }>(true);
  const rooms = await needle.generate('kitchen and study', {
    schema: { type: 'array', items: { type: 'string' } },
  });
  same<typeof rooms, string[]>(true);
  // @ts-expect-error: generate() needs a schema.
  await needle.generate('x', {});
  await needle.extract('x', { type: 'object', properties: {} }, { fullSchema: true });
  await needle.complete('x', { fullSchema: true });
  await needle.chat.completions.create({
    messages: [{ role: 'user', content: 'x' }],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object' } },
    },
    stop: ['END'],
    top_k: 40,
  });
  const messages = [{ role: 'user', content: 'x' }] as const;
  // @ts-expect-error: log-probabilities are refused.
  await needle.chat.completions.create({ messages, logprobs: true });
  await Needle.load('needle3', {
    assetBase: 'https://cdn.example/needle-web/',
    workerUrl: new URL('https://x/w.js'),
  });
  const provider = createNeedle({ needle });
  const model: NeedleLanguageModel = provider('needle3');
  same<typeof model.specificationVersion, 'v3'>(true);
  createNeedle({ model: 'needle2', loadOptions: { threads: false } }).languageModel();
}
