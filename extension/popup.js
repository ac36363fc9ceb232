// The extension's popup: pick a tool set, type a request, get the calls. The model ships inside
// the extension (models/default.cact), or is the one the user chose on the options page (kept in
// the browser, user-model.js), so it never touches the network. The engine lives in the
// extension's offscreen document (engine.js), loaded once and shared by every popup opening.
import { connectEngine } from './pkg/extension.js';
import { loadPresets, presetEditor } from './presets.js';
import { callCards } from './calls.js';
const SAVED = 'needle-extension-v1'; // last preset, request and toggle, kept between openings
const $ = (id) => document.getElementById(id);

let engine = null; // the shared engine, a Needle (pkg/extension.js), once connected
let presets = [];
let editor = null; // the preset and tools editor (presets.js)
let lastCalls = null;

function setState(state, message) {
  document.body.dataset.state = state;
  if (message !== undefined) $('status').textContent = message;
  $('run').disabled = !engine || state === 'running' || state === 'loading';
}

function saved() {
  try {
    return JSON.parse(localStorage.getItem(SAVED)) || {};
  } catch {
    return {};
  }
}

function save() {
  const custom = $('preset').value === 'custom';
  localStorage.setItem(
    SAVED,
    JSON.stringify({
      preset: $('preset').value,
      query: $('query').value,
      extractive: $('extractive').checked,
      tools: custom ? $('tools').value : undefined,
      system: custom ? $('system').value : undefined,
    }),
  );
}

/** The tools field's text when it is a JSON array, else null (the error shown, its box opened). */
function checkTools() {
  const text = editor.checkTools();
  if (text === null) $('tools-box').open = true;
  return text;
}

function showResult(r) {
  lastCalls = r.function_calls || [];
  const calls = $('calls');
  calls.replaceChildren(...callCards(lastCalls));
  if (!lastCalls.length) {
    const none = document.createElement('p');
    none.textContent = r.parse_error
      ? `No call could be read: ${r.parse_error}`
      : 'No call: none of the tools fits this request.';
    calls.append(none);
  }
  const confidence =
    typeof r.confidence === 'number' ? `confidence ${r.confidence.toFixed(2)} · ` : '';
  $('meta').textContent =
    `${confidence}${r.usage.completion_tokens} tokens · ${r.timings.tokens_per_s.toFixed(0)} tokens/s`;
  $('copy').hidden = !lastCalls.length;
  $('thinking-box').hidden = !(r.reasoning || '').trim();
  $('thinking').textContent = (r.reasoning || '').trim();
  document.body.dataset.result = JSON.stringify(r);
}

async function run(event) {
  event.preventDefault();
  const tools = checkTools();
  const query = $('query').value.trim();
  if (!engine || tools === null || !query || document.body.dataset.state === 'running') return;
  save();
  setState('running', 'Thinking…');
  try {
    // Always schema-constrained (a popup has no use for a call its tools cannot take), each
    // value searched whole: it scored better than greedy values on the generator's held-out set.
    const options = {
      tools,
      system: $('system').value || undefined,
      constrained: true,
      valueSearch: true,
      extractive: $('extractive').checked,
    };
    showResult(await engine.complete(query, options));
    setState('done', 'Done.');
  } catch (e) {
    setState('error', `Error: ${e.message} (${e.code})`);
  }
}

async function init() {
  presets = await loadPresets();
  editor = presetEditor($, presets);
  const last = saved();
  const known = last.preset === 'custom' || presets[Number(last.preset)];
  $('preset').value = known ? last.preset : '0';
  if (last.preset === 'custom') {
    $('tools').value = last.tools || '[]';
    $('system').value = last.system || '';
    checkTools();
  } else {
    editor.apply($('preset').value);
    checkTools();
  }
  if (known && last.query) $('query').value = last.query;
  if (typeof last.extractive === 'boolean') $('extractive').checked = last.extractive;

  $('preset').addEventListener(
    'change',
    () => (editor.apply($('preset').value), checkTools(), save()),
  );
  for (const id of ['tools', 'system']) {
    $(id).addEventListener('input', () => (($('preset').value = 'custom'), checkTools(), save()));
  }
  $('extractive').addEventListener('change', save);
  $('ask').addEventListener('submit', run);
  $('copy').addEventListener('click', () =>
    navigator.clipboard.writeText(JSON.stringify(lastCalls, null, 2)),
  );
  $('query').focus();

  $('change-model').addEventListener(
    'click',
    (e) => (e.preventDefault(), chrome.runtime.openOptionsPage()),
  );

  try {
    engine = await connectEngine(); // loads the model on the engine's first use only
    const i = engine.info;
    $('model-name').textContent =
      `${i.name} · Needle ${i.generation} · d=${i.d_model} · ${i.num_layers} layers · ${i.variant} · offline`;
    document.body.dataset.modelLoadedAt = String(i.loadedAt);
    setState('ready', `Ready.${i.notice ? ` ${i.notice}` : ''}`);
  } catch (e) {
    setState('error', `Could not load the model: ${e.message} (${e.code})`);
  }
}

init();
