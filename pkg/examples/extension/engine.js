import { Needle } from './needle-web/index.js';
import { defaultModel } from './needle-web/default-model.js';
import { serveEngine } from './needle-web/extension.js';

let needle = null; // loaded on the first request, then kept for every popup
// `onProgress` reaches every page waiting for this first load (connectEngine's onProgress).
serveEngine(
  ({ onProgress }) => (needle ??= Needle.load(defaultModel, { cache: 'none', onProgress })),
);
