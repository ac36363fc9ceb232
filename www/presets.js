// Hand-written tool presets for the demo, in both styles the runtime accepts:
// OpenAI style ({type: 'function', function: {...}}) and flat ({name, description, parameters}).
export const PRESETS = [
  {
    name: 'Smart home (OpenAI style)',
    query: 'Turn on the living room lights and set the heat to 21 degrees',
    tools: [
      {
        type: 'function',
        function: {
          name: 'set_light',
          description: 'Turn a light on or off, optionally setting its brightness.',
          parameters: {
            type: 'object',
            properties: {
              room: { type: 'string', description: 'Room name, e.g. "kitchen".' },
              on: { type: 'boolean' },
              brightness: { type: 'integer', minimum: 0, maximum: 100 },
            },
            required: ['room', 'on'],
          },
        },
      },
      {
        type: 'function',
        function: {
          name: 'set_thermostat',
          description: 'Set the target temperature in degrees Celsius.',
          parameters: {
            type: 'object',
            properties: { temperature: { type: 'number' } },
            required: ['temperature'],
          },
        },
      },
    ],
  },
  {
    name: 'Timers and alarms (flat style)',
    query: 'Wake me up at 7 tomorrow and start a 10 minute tea timer',
    tools: [
      {
        name: 'set_alarm',
        description: 'Set an alarm at a local time.',
        parameters: {
          type: 'object',
          properties: { time: { type: 'string', description: 'HH:MM, 24-hour.' }, label: { type: 'string' } },
          required: ['time'],
        },
      },
      {
        name: 'start_timer',
        description: 'Start a countdown timer.',
        parameters: {
          type: 'object',
          properties: { minutes: { type: 'number' }, label: { type: 'string' } },
          required: ['minutes'],
        },
      },
    ],
  },
  {
    name: 'Media player (flat style)',
    query: 'Play some jazz in the kitchen, not too loud',
    tools: [
      {
        name: 'play_music',
        description: 'Play music by genre, artist or playlist.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string' }, speaker: { type: 'string' } },
          required: ['query'],
        },
      },
      {
        name: 'set_volume',
        description: 'Set the volume of a speaker, 0 to 100.',
        parameters: {
          type: 'object',
          properties: { level: { type: 'integer' }, speaker: { type: 'string' } },
          required: ['level'],
        },
      },
    ],
  },
  {
    name: 'Messages (OpenAI style)',
    query: 'Text Sam that I will be ten minutes late',
    tools: [
      {
        type: 'function',
        function: {
          name: 'send_message',
          description: 'Send a text message to a contact.',
          parameters: {
            type: 'object',
            properties: { to: { type: 'string' }, body: { type: 'string' } },
            required: ['to', 'body'],
          },
        },
      },
    ],
  },
];
