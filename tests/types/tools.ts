// Compiled by tests/js/types.test.mjs (tsc --noEmit --strict): what index.d.ts accepts and rejects.
import { Needle, type Tool } from 'needle-web';
import { defaultModel, defaultModelSha256 } from 'needle-web/default-model';
import { environments } from 'needle-web/environments';

const openai = {
  type: 'function',
  function: {
    name: 'set_light',
    description: 'Turn a light on or off.',
    parameters: {
      type: 'object',
      properties: { room: { type: 'string', enum: ['kitchen', 'hall'] }, on: { type: 'boolean' }, level: { type: 'integer', minimum: 0 } },
      required: ['room'],
    },
  },
} as const satisfies Tool;

const flat: Tool = { name: 'play', parameters: { type: 'object', properties: { song: { type: 'string', maxLength: 80 } } } };

// @ts-expect-error a misspelled schema key
const typo: Tool = { name: 'x', parameters: { type: 'object', properties: { a: { type: 'string', descripton: 'oops' } } } };
// @ts-expect-error an unknown schema type
const badType: Tool = { name: 'x', parameters: { type: 'object', properties: { a: { type: 'text' } } } };
// @ts-expect-error parameters must be an object schema
const notObject: Tool = { name: 'x', parameters: { type: 'string' } };
// @ts-expect-error enum values must match the type
const badEnum: Tool = { name: 'x', parameters: { type: 'object', properties: { n: { type: 'number', enum: ['one'] } } } };

export async function main() {
  const needle = await Needle.load(defaultModel, { integrity: defaultModelSha256, cache: 'indexeddb', logLevel: 'info' });
  const r = await needle.complete('turn on the kitchen light', { tools: [openai, { name: 'play' }] });
  const name: 'set_light' | 'play' = r.function_calls[0].name;
  // @ts-expect-error a name that is not a tool's
  const wrong: 'other' = r.function_calls[0].name;
  const env = await needle.complete('hi', environments.smart_home);
  const anyName: string = env.function_calls[0].name;
  await Needle.load('x.cact', { cache: { get: async () => undefined, put: async () => {}, delete: async () => false, keys: async () => [] } });
  // @ts-expect-error not a storage backend
  await Needle.load('x.cact', { cache: 'localStorage' });
  await Needle.load('x.cact', { fetch: { headers: { Authorization: 'Bearer t' } }, worker: false });
  const onGpu = await Needle.load('x.cact', { backend: 'webgpu', gpuKernels: 'tiled' });
  const kernels: 'plain' | 'tiled' | null = onGpu.info.gpu_kernels;
  // @ts-expect-error the subgroup kernels run in no browser build
  await Needle.load('x.cact', { gpuKernels: 'subgroup' });
  const usage = await Needle.cacheUsage();
  const backend: 'cache-api' | 'indexeddb' | 'none' | 'custom' = usage.backend;
  return [flat, typo, badType, notObject, badEnum, name, wrong, anyName, kernels, backend];
}
