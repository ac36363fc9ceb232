// Types for needle-web/extension: one engine shared by a Manifest V3 extension's pages.
import type { LoadProgress, Logger, LogLevel, Needle } from './index.js';

/** What `serveEngine`'s `getNeedle` is given: progress of a load it starts reaches every waiting page. */
export interface EngineLoadContext {
  onProgress: (progress: LoadProgress) => void;
}

export interface ServeEngineOptions {
  /** Fields added to what pages read as `needle.info` (a label, when the model was loaded). */
  describe?: (needle: Needle) => Record<string, unknown> | Promise<Record<string, unknown>>;
}

/**
 * Where the engine lives (the offscreen document): serves connected pages. `getNeedle` is called
 * on every request: keep it memoised, so the model loads once.
 */
export function serveEngine(
  getNeedle: (context: EngineLoadContext) => Needle | Promise<Needle>,
  options?: ServeEngineOptions,
): void;

/** In the service worker: creates the offscreen document `url` when a page connects. */
export function onEnsureEngine(url: string): void;

export interface ConnectOptions {
  /** The model's load, when this page waits for it. */
  onProgress?: (progress: LoadProgress) => void;
  logger?: Logger;
  logLevel?: LogLevel;
}

/**
 * In any extension page: the shared engine as a Needle, its model loaded (the whole API; tool
 * functions run in this page). `dispose()` disconnects this page only.
 */
export function connectEngine(options?: ConnectOptions): Promise<Needle>;
