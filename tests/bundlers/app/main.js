// A web developer's first app: load the default model, ask one question, show the answer.
// The bundler suite builds it with each bundler; the page writes its outcome to data-outcome.
import { Needle } from 'needle-web';
import { defaultModel } from 'needle-web/default-model';
import { environments } from 'needle-web/environments';
import { ask } from './ask.js';

ask(() => Needle.load(defaultModel), environments.smart_home);
