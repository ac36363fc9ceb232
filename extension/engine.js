// The engine, loaded once in the extension's offscreen document and shared by every popup
// opening: the bundled model, or the one chosen on the options page (user-model.js). Each request
// checks the choice (localStorage, shared with the options page): a new one replaces the model.
import { Needle } from './pkg/index.js';
import { serveEngine } from './pkg/extension.js';
import { chosenModel, readModel } from './user-model.js';

const MODEL = './models/default.cact';
let loaded = null; // { choice, needle: Promise<Needle> } for the model in use

async function load(onProgress) {
  let source = MODEL;
  let name = 'bundled demo model';
  let notice = '';
  try {
    const bytes = await readModel();
    if (bytes) [source, name] = [bytes, chosenModel().name];
  } catch (e) {
    notice = `Using the bundled model: ${e.message}.`;
  }
  // The model is inside the extension already: storage would only duplicate it. Its presets'
  // prefixes come prefilled (tools/extension.mjs).
  const snapshots = source === MODEL ? await shippedSnapshots() : [];
  const needle = await Needle.load(source, { cache: 'none', onProgress, snapshots });
  needle.label = { name, notice, loadedAt: Date.now() };
  return needle;
}

/** The URLs of the bundled model's preset snapshots (snapshots/index.json), or none. */
async function shippedSnapshots() {
  try {
    const list = await (await fetch('./snapshots/index.json')).json();
    return list.map((file) => new URL(`./snapshots/${file}`, location.href).href);
  } catch {
    return [];
  }
}

/** The Needle for the model chosen now; `onProgress` hears a load it starts (extension.js). */
function current({ onProgress } = {}) {
  const choice = chosenModel()?.sha256 ?? 'bundled';
  if (loaded && loaded.choice === choice) return loaded.needle;
  if (loaded)
    loaded.needle.then(
      (n) => n.dispose(),
      () => {},
    );
  const needle = load(onProgress);
  loaded = { choice, needle };
  needle.catch(() => loaded && loaded.needle === needle && (loaded = null)); // the next request tries again
  return needle;
}

// What the popup shows about the model, and when it was loaded (the e2e test compares it).
serveEngine(current, { describe: (needle) => needle.label });
