import { Needle } from './needle-web/index.js';
import { defaultModel } from './needle-web/default-model.js';
import { serveEngine } from './needle-web/host/extension.js';

let needle = null; // loaded on the first request, then kept for every popup
serveEngine(() => (needle ??= Needle.load(defaultModel, { cache: 'none' })));
