// The extension's service worker: it only creates the offscreen document the engine lives in
// (a service worker has no Worker and no import()), when a popup asks for it.
import { onEnsureEngine } from './pkg/extension.js';

onEnsureEngine('engine.html');
