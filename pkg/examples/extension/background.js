import { onEnsureEngine } from './needle-web/extension.js';

onEnsureEngine('engine.html');
