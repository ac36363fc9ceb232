// Compiled by tests/js/hygiene.test.mjs (tsc --noEmit --strict): models by name, the download
// (prefetch) API, the mirror setting and the load's stall bound.
import { Needle, NeedleError, type DownloadedModel } from 'needle-web';

export async function models(signal: AbortSignal) {
  const three = await Needle.load('needle3', { revision: 'main', stallTimeout: 60_000 });
  const tuned = await Needle.load('someone/tuned', { file: 'tuned.cact', modelHost: new URL('https://mirror.test/') });
  Needle.modelHost = 'https://mirror.test';
  Needle.modelHost = null;
  const host: string = Needle.modelHost;
  const got: DownloadedModel = await Needle.download('needle2', { onProgress: ({ loaded }) => loaded, signal, integrity: 'sha256:00', stallTimeout: 5000 });
  const sha: string = got.sha256;
  const bytes: Uint8Array = got.bytes;
  const stored: boolean = await Needle.cached('needle3', { revision: 'v1' });
  await Needle.evict('someone/tuned', { file: 'x.cact', cache: 'indexeddb' });
  try {
    await Needle.load('someone/two');
  } catch (e) {
    if (e instanceof NeedleError && e.code === 'bad_source') void e.files?.join(', ');
    if (e instanceof NeedleError && e.code === 'timeout') void e.message;
  }
  // @ts-expect-error a download takes a URL or a name, not bytes
  await Needle.download(new Uint8Array(4));
  // @ts-expect-error revision is text
  await Needle.load('needle3', { revision: 3 });
  return [three, tuned, host, sha, bytes, stored];
}
