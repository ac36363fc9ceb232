// A small simulated house for the agent mode: the smart-home environment's tools as real
// functions that change it, and a view that shows the change.
export const ROOMS = ['kitchen', 'living_room', 'bedroom', 'study'];
const FAN_ROOMS = ['living_room', 'bedroom', 'study'];
const VACUUM_ROOMS = ['kitchen', 'living_room', 'bedroom'];
const COLORS = {
  'warm white': '#ffd27a',
  'cool white': '#e8f1ff',
  red: '#ff6b6b',
  green: '#5fd38d',
  blue: '#6aa7ff',
};

const label = (room) => room.replace('_', ' ');
// Devices answer after a moment, as real ones do; the agent loop awaits them.
const DEVICE_MS = 120;
const settle = () => new Promise((r) => setTimeout(r, DEVICE_MS));

function oneOf(name, value, allowed) {
  if (!allowed.includes(value))
    throw new Error(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
}

/** A fresh house: `state`, the tools' `functions` (by tool name) and `onChange(listener)`. */
export function createHouse() {
  const state = {
    lights: Object.fromEntries(
      ROOMS.map((r) => [r, { on: false, brightness: 100, color: 'warm white' }]),
    ),
    blinds: Object.fromEntries(ROOMS.map((r) => [r, 'open'])),
    fans: Object.fromEntries(FAN_ROOMS.map((r) => [r, { on: false, speed: null }])),
    thermostat: 19,
    vacuum: { status: 'docked', room: null },
  };
  const listeners = new Set();
  const changed = (device, room) => {
    for (const f of listeners) f({ device, room });
  };

  const functions = {
    async control_lights({ room, action, brightness_percent, color }) {
      oneOf('room', room, ROOMS);
      oneOf('action', action, ['on', 'off', 'dim']);
      if (color !== undefined) oneOf('color', color, Object.keys(COLORS));
      if (
        brightness_percent !== undefined &&
        !(
          Number.isInteger(brightness_percent) &&
          brightness_percent >= 0 &&
          brightness_percent <= 100
        )
      ) {
        throw new Error('brightness_percent must be a whole number from 0 to 100');
      }
      await settle();
      const light = state.lights[room];
      light.on = action !== 'off';
      if (action === 'dim') light.brightness = brightness_percent ?? 50;
      else if (brightness_percent !== undefined) light.brightness = brightness_percent;
      else if (action === 'on') light.brightness = 100;
      if (color !== undefined) light.color = color;
      changed('light', room);
      return { room, on: light.on, brightness_percent: light.brightness, color: light.color };
    },
    async set_thermostat({ temperature }) {
      if (!(Number.isInteger(temperature) && temperature >= 10 && temperature <= 30)) {
        throw new Error(
          `the thermostat takes whole degrees from 10 to 30 (got ${JSON.stringify(temperature)})`,
        );
      }
      await settle();
      state.thermostat = temperature;
      changed('thermostat');
      return { temperature };
    },
    async control_fan({ room, action, speed }) {
      oneOf('room', room, FAN_ROOMS);
      oneOf('action', action, ['on', 'off']);
      if (speed !== undefined) oneOf('speed', speed, ['low', 'medium', 'high']);
      await settle();
      state.fans[room] = {
        on: action === 'on',
        speed: action === 'on' ? (speed ?? 'medium') : null,
      };
      changed('fan', room);
      return { room, ...state.fans[room] };
    },
    async control_blinds({ room, action }) {
      oneOf('room', room, ROOMS);
      oneOf('action', action, ['open', 'close']);
      await settle();
      state.blinds[room] = action === 'open' ? 'open' : 'closed';
      changed('blinds', room);
      return { room, blinds: state.blinds[room] };
    },
    async start_robot_vacuum({ action, room }) {
      oneOf('action', action, ['start', 'stop', 'dock']);
      if (room !== undefined) oneOf('room', room, VACUUM_ROOMS);
      await settle();
      state.vacuum =
        action === 'start'
          ? { status: 'cleaning', room: room ?? null }
          : { status: action === 'dock' ? 'docked' : 'stopped', room: null };
      changed('vacuum');
      return { ...state.vacuum };
    },
  };

  return { state, functions, onChange: (f) => listeners.add(f) };
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Draws `house` into `root` and redraws on every change, flashing what changed. */
export function showHouse(root, house) {
  const draw = (flash) => {
    const { lights, blinds, fans, thermostat, vacuum } = house.state;
    const top = el('div', 'house-top');
    const thermo = el('div', 'device thermostat', `Thermostat ${thermostat} °C`);
    thermo.dataset.device = 'thermostat';
    thermo.dataset.value = String(thermostat);
    const vac = el(
      'div',
      'device vacuum',
      `Vacuum: ${vacuum.status}${vacuum.room ? ` (${label(vacuum.room)})` : ''}`,
    );
    vac.dataset.device = 'vacuum';
    vac.dataset.value = vacuum.status;
    top.append(thermo, vac);
    const rooms = el('div', 'rooms');
    for (const room of ROOMS) {
      const card = el('section', 'room');
      card.dataset.room = room;
      const light = lights[room];
      card.classList.toggle('lit', light.on);
      if (light.on) card.style.setProperty('--glow', COLORS[light.color]);
      card.style.setProperty(
        '--level',
        String(light.on ? 0.25 + (0.75 * light.brightness) / 100 : 0),
      );
      card.append(el('h4', null, label(room)));
      const bulb = el(
        'div',
        'device light',
        light.on ? `Light on · ${light.brightness}% · ${light.color}` : 'Light off',
      );
      bulb.dataset.device = 'light';
      bulb.dataset.value = light.on ? 'on' : 'off';
      const blind = el('div', `device blinds ${blinds[room]}`, `Blinds ${blinds[room]}`);
      blind.dataset.device = 'blinds';
      blind.dataset.value = blinds[room];
      card.append(bulb, blind);
      if (fans[room]) {
        const fan = el(
          'div',
          'device fan',
          fans[room].on ? `Fan on · ${fans[room].speed}` : 'Fan off',
        );
        fan.dataset.device = 'fan';
        fan.dataset.value = fans[room].on ? 'on' : 'off';
        card.append(fan);
      }
      rooms.append(card);
    }
    root.replaceChildren(top, rooms);
    if (flash) {
      const target = flash.room
        ? root.querySelector(`[data-room="${flash.room}"] [data-device="${flash.device}"]`)
        : root.querySelector(`[data-device="${flash.device}"]`);
      if (target) target.classList.add('flash');
    }
  };
  house.onChange(draw);
  draw(null);
}
