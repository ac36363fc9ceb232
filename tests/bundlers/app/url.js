// The same app with a model from a URL: a build of it must not carry the default model.
import { Needle } from 'needle-web';
import { ask } from './ask.js';

ask(() => Needle.load(new URL('model.cact', location.href)), { tools: [] });
