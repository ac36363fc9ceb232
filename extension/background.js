// The extension's service worker: it creates the offscreen document the engine lives in (a
// service worker has no Worker and no import()) when a popup asks for it, and rings the timers
// the popup's set_timer calls left (browser-actions.js) as notifications.
import { onEnsureEngine } from './pkg/extension.js';

onEnsureEngine('engine.html');

const TIMER = 'needle-timer:';

function ring(alarm) {
  if (!alarm.name.startsWith(TIMER)) return;
  const label = alarm.name.slice(TIMER.length).replace(/^\d+:/, '');
  chrome.notifications.create(alarm.name, {
    type: 'basic',
    iconUrl: 'icons/128.png',
    title: 'Timer',
    message: label || 'Time is up.',
  });
}

// alarms and notifications are optional permissions: listen once they are granted.
let listening = false;
function listen() {
  if (listening || !chrome.alarms) return;
  chrome.alarms.onAlarm.addListener(ring);
  listening = true;
}
listen();
chrome.permissions.onAdded.addListener(listen);
