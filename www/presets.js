// Tool presets for the demo. First the six environments that ship with upstream's package
// (presets/*.json: tool schemas and system prompt, dumped by tools/train/dump_tools.py) and the
// browser environment the extension acts with (the embedded default model was trained on all
// seven), each with a hand-written example query; then
// hand-written presets in both styles the runtime accepts: OpenAI style
// ({type: 'function', function: {...}}) and flat ({name, description, parameters}).
const ENVIRONMENTS = [
  ['smart_home', 'Smart home', 'Dim the bedroom lights to 40 percent'],
  ['media_player', 'Media player', 'Turn the volume up to 70'],
  ['kitchen_appliance', 'Kitchen', 'Preheat the oven to 200 degrees'],
  ['productivity', 'Productivity', 'Set a timer for 12 minutes'],
  ['wearable', 'Wearable', 'Start an outdoor run workout'],
  ['data_capture', 'Data capture', 'Log 500 ml of water'],
  // The browser actions the extension executes.
  ['browser', 'Browser', 'Pin this tab'],
];

/**
 * Every preset: `{name, query, tools, system?, environment?}` (`environment`: the file's name, for
 * environments); environments whose file fails to load are left out.
 */
export async function loadPresets() {
  const environments = await Promise.all(
    ENVIRONMENTS.map(async ([file, name, query]) => {
      try {
        const response = await fetch(new URL(`./presets/${file}.json`, import.meta.url));
        if (!response.ok) return null;
        const env = await response.json();
        const { tools, system } = env;
        return { name: `${name} (environment)`, query, tools, system, environment: file };
      } catch {
        return null;
      }
    }),
  );
  return [...environments.filter(Boolean), ...HAND_WRITTEN];
}

/**
 * The preset editor the demo page and the extension popup share, on elements found by `$(id)`:
 * a `preset` select, `tools`, `system` and `query` fields and a `tools-error` line.
 */
export function presetEditor($, presets) {
  const select = $('preset');
  presets.forEach((p, i) => {
    select.add(new Option(p.name, String(i)));
  });
  select.add(new Option('Custom', 'custom'));
  return {
    /** Fills the fields from preset `value` (an index); `query`: the example query too. */
    apply(value, { query = true } = {}) {
      const p = presets[Number(value)];
      if (!p) return;
      $('tools').value = JSON.stringify(p.tools, null, 2);
      $('system').value = p.system || '';
      if (query) $('query').value = p.query;
      this.checkTools();
    },
    /**
     * The tools field's text if it is a JSON array, else null with the error shown. The text
     * itself goes to the core, so the tools' key order is kept exactly.
     */
    checkTools() {
      const text = $('tools').value;
      let error = '';
      try {
        if (!Array.isArray(JSON.parse(text))) error = 'Tools must be a JSON array.';
      } catch (e) {
        error = e.message;
      }
      $('tools-error').hidden = !error;
      $('tools-error').textContent = error;
      return error ? null : text;
    },
  };
}

const HAND_WRITTEN = [
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
          properties: {
            time: { type: 'string', description: 'HH:MM, 24-hour.' },
            label: { type: 'string' },
          },
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
