// Compiled by tests/js/types-trust.test.mjs (tsc --noEmit --strict, tsconfig.trust.json: the SDK's own
// types need Node's): the provider's model is a LanguageModel of `ai` 7 and of `ai` 6 (what
// `npm i ai` installs on Node 20), and what it returns holds no `any`.
import type { Needle } from 'needle-web';
import { createNeedle, type NeedleLanguageModel, type NeedleStreamPart } from 'needle-web/ai-sdk';
import type { LanguageModel as LanguageModel7 } from 'ai';
import type { LanguageModel as LanguageModel6 } from 'ai6';

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Equal<A, B>) => ok;
/** True only for `any`. */
type IsAny<T> = 0 extends 1 & T ? true : false;

export async function aiSdk(needle: Needle) {
  const model: NeedleLanguageModel = createNeedle({ needle })();
  const v7: LanguageModel7 = model;
  const v6: LanguageModel6 = model;
  same<typeof model.specificationVersion, 'v3'>(true);
  const generated = await model.doGenerate({
    prompt: [{ role: 'user', content: [{ type: 'text', text: 'Lights off' }] }],
  });
  same<IsAny<typeof generated>, false>(true);
  for (const part of generated.content) {
    same<IsAny<typeof part>, false>(true);
    if (part.type === 'tool-call') same<typeof part.input, string>(true);
  }
  same<IsAny<typeof generated.usage.inputTokens.total>, false>(true);
  const { stream } = await model.doStream({ prompt: [] });
  same<typeof stream, ReadableStream<NeedleStreamPart>>(true);
  const { value } = await stream.getReader().read();
  if (value) same<IsAny<typeof value>, false>(true);
  return [v7, v6];
}
