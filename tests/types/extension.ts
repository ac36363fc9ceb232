// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): needle-web/extension and its
// service-worker entry.
import { connectEngine, onEnsureEngine, serveEngine } from 'needle-web/extension';
import { Needle, serveEngine as serveInWorker } from 'needle-web/extension/service-worker';

onEnsureEngine('engine.html');
let loaded: Promise<Needle> | null = null;
serveEngine(({ onProgress }) => (loaded ??= Needle.load('needle3', { onProgress })), {
  describe: (needle) => ({ label: needle.info.generation }),
});
serveInWorker(async () => Needle.load(new Uint8Array(8)));
// @ts-expect-error getNeedle returns a Needle, not a model source
serveEngine(() => 'needle3');

export async function page() {
  const needle = await connectEngine({ onProgress: ({ phase, loaded }) => [phase, loaded], logLevel: 'warn' });
  const generation: number = needle.info.generation;
  for await (const chunk of needle.stream('Kitchen light on', { maxTokens: 8 })) void chunk;
  const run = await needle.run('Kitchen light on', { tools: [{ name: 'set_light', fn: () => 1 }] });
  needle.dispose();
  // @ts-expect-error logLevel is a level name
  await connectEngine({ logLevel: 'loud' });
  return [generation, run.steps];
}
