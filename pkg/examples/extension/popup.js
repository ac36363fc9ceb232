import { connectEngine } from './needle-web/extension.js';
import { environments } from './needle-web/environments.js';

const engine = await connectEngine();
const stop = new AbortController(); // stop.abort() cancels the generation in the engine
const result = await engine.complete('Turn on the kitchen lights', {
  ...environments.smart_home,
  signal: stop.signal,
});
document.body.textContent = JSON.stringify(result.function_calls);
