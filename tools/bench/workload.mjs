// The benchmark's requests, the same for every variant (peer included, through the prompt ids
// `needle bench --ids` renders from them). Run in this order, in one session:
//   short   a ~130-token prompt (one tool), then 64 generated tokens: prefill and decode speed
//   long    a ~1,000-token prompt (whole tool environments from www/presets/), then 64 tokens
//           (16 with --quick): speed at a long context, and the first request's time to first token
//   repeat  the same system + tools as `long`, a new query: time to first token of a repeated
//           request (equal to `long`'s without prefix caching; the win once it exists)
// Greedy decoding, no constraint. Random weights rarely stop early; a record says how many
// tokens it decoded.
import { readFileSync } from 'node:fs';

const preset = (name) => JSON.parse(readFileSync(new URL(`../../www/presets/${name}.json`, import.meta.url), 'utf8'));

// Tool lists whose prompt is ~1,000 tokens with the shipped-geometry container's tokenizer.
const LONG_ENVIRONMENTS = ['smart_home', 'media_player'];

const SHORT_TOOLS = [
  {
    name: 'set_light',
    description: 'Turn a room light on or off and set its brightness',
    parameters: {
      type: 'object',
      properties: { room: { type: 'string' }, on: { type: 'boolean' }, brightness: { type: 'integer' } },
      required: ['room', 'on'],
    },
  },
];

export function workload({ quick = false } = {}) {
  const envs = LONG_ENVIRONMENTS.map(preset);
  const long = {
    system: envs.map((e) => e.system).join(' '),
    tools: JSON.stringify(envs.flatMap((e) => e.tools)),
  };
  return [
    {
      name: 'short',
      query: 'Turn on the kitchen lights and dim them to 40 percent',
      system: 'You control the lights.',
      tools: JSON.stringify(SHORT_TOOLS),
      max_tokens: 64,
    },
    { name: 'long', query: 'Lock the front door and play some jazz in the living room', ...long, max_tokens: quick ? 16 : 64 },
    { name: 'repeat', query: 'Set the thermostat to 21 degrees', ...long, max_tokens: 1 },
  ];
}
