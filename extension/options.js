// The extension's options page: choose the model the popup runs, from a file, a URL or a model
// name (needle3 from the Hub). A choice is loaded once here, so a file that is not a model is
// refused with the engine's own error before it replaces anything.
import { Needle } from './pkg/index.js';
import { chosenModel, forgetModel, keepModel } from './user-model.js';

const $ = (id) => document.getElementById(id);

function mib(n) {
  return `${(n / 1048576).toFixed(1)} MiB`;
}

function showCurrent() {
  const meta = chosenModel();
  $('current').textContent = meta
    ? `The popup runs ${meta.name} (Needle ${meta.generation}, ${mib(meta.bytes)}, sha256 ${meta.sha256.slice(0, 12)}…).`
    : 'The popup runs the bundled demo model.';
  $('reset').disabled = !meta;
}

function setState(state, message, bad = false) {
  document.body.dataset.state = state;
  $('message').textContent = message;
  $('message').className = bad ? 'error' : 'muted';
  for (const id of ['file', 'url', 'download']) $(id).disabled = state === 'working';
  if (state !== 'working') $('progress').hidden = true;
}

function onProgress({ loaded, total }) {
  $('progress').hidden = false;
  if (total) {
    $('progress').max = total;
    $('progress').value = loaded;
  } else {
    $('progress').removeAttribute('value');
  }
  $('message').textContent = `Downloading… ${mib(loaded)}${total ? ` of ${mib(total)}` : ''}`;
}

/** Loads the bytes as the engine would, then keeps them; `name` is what the popup shows. */
async function choose(getBytes, name) {
  setState('working', 'Reading…');
  let needle = null;
  try {
    const bytes = await getBytes();
    setState('working', 'Checking the model…');
    needle = await Needle.load(bytes, { cache: false });
    const meta = await keepModel(bytes, { name, generation: needle.info.generation });
    showCurrent();
    setState('done', `Done: the popup now runs ${meta.name}.`);
  } catch (e) {
    setState('error', `Not changed: ${e.message}${e.code ? ` (${e.code})` : ''}`, true);
  } finally {
    if (needle) needle.dispose();
  }
}

$('file').addEventListener('change', () => {
  const file = $('file').files[0];
  if (file) choose(async () => new Uint8Array(await file.arrayBuffer()), file.name);
});

$('from-url').addEventListener('submit', (event) => {
  event.preventDefault();
  const url = $('url').value.trim(); // or a model name: needle3, owner/repo
  if (!url) return;
  const name = decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || url);
  choose(async () => (await Needle.download(url, { cache: 'none', onProgress })).bytes, name);
});

$('reset').addEventListener('click', async () => {
  // Set at once, so a watcher of the state never reads the previous choice's 'done'.
  setState('working', 'Removing the chosen model…');
  try {
    await forgetModel();
    setState('done', 'Done: the popup runs the bundled demo model again.');
  } catch (e) {
    setState('error', `Not changed: ${e.message}`, true);
  }
  showCurrent();
});

showCurrent();
