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

const preset = (name) =>
  JSON.parse(readFileSync(new URL(`../../www/presets/${name}.json`, import.meta.url), 'utf8'));

// Prompt lengths with the shipped-geometry containers' tokenizer (v3): short 134 tokens, long
// (one environment, system and five tools) 964, repeat 936. All six environments (30 tools,
// issue 32's figure) would be ~6,000 tokens: past the 4,096-token context.
const LONG_ENVIRONMENT = 'wearable';

const SHORT_TOOLS = [
  {
    name: 'set_light',
    description: 'Turn a room light on or off and set its brightness',
    parameters: {
      type: 'object',
      properties: {
        room: { type: 'string' },
        on: { type: 'boolean' },
        brightness: { type: 'integer' },
      },
      required: ['room', 'on'],
    },
  },
];

export function workload({ quick = false } = {}) {
  const env = preset(LONG_ENVIRONMENT);
  const long = { system: env.system, tools: JSON.stringify(env.tools) };
  return [
    {
      name: 'short',
      query: 'Turn on the kitchen lights and dim them to 40 percent',
      system: 'You control the lights in a house. Answer with one call per room.',
      tools: JSON.stringify(SHORT_TOOLS),
      max_tokens: 64,
    },
    {
      name: 'long',
      query: 'Reply to Sam that I will be there in ten minutes, then start a run',
      ...long,
      max_tokens: quick ? 16 : 64,
    },
    { name: 'repeat', query: 'Set a timer for five minutes', ...long, max_tokens: 1 },
  ];
}
