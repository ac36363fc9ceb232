// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): prepare(), prefix snapshots (the
// load options, loadSnapshot, the result's `snapshot` field) and the snapshots in cacheUsage.
import { Needle, type Prepared } from 'needle-web';

export async function snapshots(signal: AbortSignal, made: Uint8Array) {
  const needle = await Needle.load('needle3', { snapshots: ['/snapshots/home.snap', made], snapshotBudget: 1 << 26 });
  await Needle.load('needle3', { snapshots: false });
  const tools = [{ type: 'function', function: { name: 'set_light', parameters: { type: 'object', properties: {} } } }] as const;
  const ready: Prepared = await needle.prepare({ tools, system: 'You run a house.' }, { signal });
  const state: 'held' | 'loaded' | 'saved' | 'prefilled' | null = ready.snapshot;
  const { tokens }: { tokens: number } = await needle.loadSnapshot(new URL('https://x.test/a.snap'));
  const r = await needle.complete('lights off', { tools });
  const used: 'loaded' | 'saved' | null = r.snapshot;
  const usage = await Needle.cacheUsage();
  for (const s of usage.snapshots) await Needle.evict(s.url);
  // @ts-expect-error a prefix has no query
  await needle.prepare({ tools, query: 'lights off' });
  // @ts-expect-error snapshots are URLs or bytes
  await Needle.load('needle3', { snapshots: [42] });
  return [state, tokens, used];
}
