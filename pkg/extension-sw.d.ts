// Types for needle-web/extension/service-worker: the shared engine inside the service worker.
export { Needle, NeedleError } from './index.js';
export type { EngineLoadContext, ServeEngineOptions } from './extension.js';
import type { EngineLoadContext, ServeEngineOptions } from './extension.js';
import type { Needle } from './index.js';

/** As needle-web/extension's serveEngine, in the service worker (no offscreen document). */
export function serveEngine(
  getNeedle: (context: EngineLoadContext) => Needle | Promise<Needle>,
  options?: ServeEngineOptions,
): void;
