// needle-web/extension/service-worker: the shared engine of an extension (extension.js) inside its
// Manifest V3 service worker, with no offscreen document. A service worker has no Worker and may
// not call import(), so the engine runs on the service worker's own thread, one thread, its host
// imported statically here; pages connect with `connectEngine()` from needle-web/extension as
// they would to the offscreen engine. Chrome stops an idle service worker (about 30 s without an
// event or a message; an open Port's messages count): the model then loads again on the next use.
//
//   background.js:  import { Needle, serveEngine } from 'needle-web/extension/service-worker';
//                   let needle = null;
//                   serveEngine(({ onProgress }) => (needle ??= Needle.load(url, { onProgress })));
import { serve } from './worker.js';
import { provideInlineServe } from './host/index.js';
import { answerEnsure, serveEngine as serveConnected } from './extension.js';

export { Needle, NeedleError } from './index.js';

provideInlineServe(serve);

/** As extension.js's serveEngine, and answers `connectEngine`'s ensure message itself. */
export function serveEngine(getNeedle, options) {
  answerEnsure(async () => {});
  serveConnected(getNeedle, options);
}
