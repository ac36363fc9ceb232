import { onEnsureEngine } from './needle-web/host/extension.js';

onEnsureEngine('engine.html');
