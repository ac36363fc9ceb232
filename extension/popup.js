// The extension's popup: pick a tool set, type a request, get the calls. On the browser
// environment and on the tab's own WebMCP tools ("This page's tools") it also runs them (act.js);
// the other tool sets show the calls. The model ships inside the extension
// (models/default.cact), or is the one the user chose on the options page (kept in the browser,
// user-model.js), so it never touches the network. The engine lives in the extension's offscreen
// document (engine.js), loaded once and shared by every popup opening.
import { connectEngine } from './pkg/extension.js';
import { loadPresets, presetEditor } from './presets.js';
import { callCards } from './calls.js';
import { actOnBrowser, actOnPage, pageToolList } from './act.js';
const SAVED = 'needle-extension-v1'; // last preset, request and toggle, kept between openings
const $ = (id) => document.getElementById(id);

let engine = null; // the shared engine, a Needle (pkg/extension.js), once connected
let presets = [];
let editor = null; // the preset and tools editor (presets.js)
let lastCalls = null;
let target = null; // the tab the popup acts on
const PAGE = 'page'; // the select's value for the tab's own WebMCP tools

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

/** act.js's flow for the selected tool set, or null where the popup only shows the calls. */
function actingMode() {
  if ($('preset').value === PAGE) return actOnPage;
  return presets[Number($('preset').value)]?.environment === 'browser' ? actOnBrowser : null;
}

/** Asks before a run: resolves true after "Run" (and the permissions granted), false after "Cancel". */
function confirmRun(text, permissions) {
  $('confirm-text').textContent = permissions.length
    ? `${text} (needs permission: ${permissions.join(', ')})`
    : text;
  $('confirm').hidden = false;
  setState('confirm', 'Confirm to run.');
  return new Promise((resolve) => {
    const answer = async (ok) => {
      $('confirm').hidden = true;
      $('confirm-run').onclick = $('confirm-cancel').onclick = null;
      // Asked inside the click: permissions are only granted on a user gesture.
      const granted =
        ok && (!permissions.length || (await chrome.permissions.request({ permissions })));
      setState('running', granted ? 'Running…' : 'Not run.');
      resolve(granted);
    };
    $('confirm-run').onclick = () => answer(true);
    $('confirm-cancel').onclick = () => answer(false);
  });
}

/** One line per executed call: its result, or its error. Closed tabs can be reopened. */
function showActions(calls, results) {
  $('results').replaceChildren(
    ...calls.map((call, i) => {
      const li = document.createElement('li');
      const r = results[i];
      li.className = r && r.error ? 'failed' : 'ran';
      li.textContent = `${call.name}: ${r && r.error ? `failed: ${r.error}` : JSON.stringify(r)}`;
      return li;
    }),
  );
  const closed = results.reduce((n, r) => n + (r && Number.isInteger(r.closed) ? r.closed : 0), 0);
  $('undo').hidden = !(closed && chrome.sessions);
  $('undo').onclick = async () => {
    for (let i = 0; i < closed; i++) await chrome.sessions.restore();
    $('undo').hidden = true;
    setState('done', `Reopened ${closed} tab${closed === 1 ? '' : 's'}.`);
  };
  document.body.dataset.results = JSON.stringify(results);
}

const actUi = { calls: showResult, confirm: confirmRun, results: showActions };

async function run(event) {
  event.preventDefault();
  const tools = checkTools();
  const query = $('query').value.trim();
  const busy = ['running', 'confirm'].includes(document.body.dataset.state);
  if (!engine || tools === null || !query || busy) return;
  save();
  $('results').replaceChildren();
  $('undo').hidden = true;
  setState('running', 'Thinking…');
  try {
    // Always schema-constrained (a popup has no use for a call its tools cannot take), each
    // value searched whole: it scored better than greedy values on the generator's held-out set.
    const options = {
      tools: $('preset').value === PAGE ? undefined : tools,
      system: $('system').value || undefined,
      constrained: true,
      valueSearch: true,
      extractive: $('extractive').checked,
    };
    const mode = actingMode();
    if (!mode) showResult(await engine.complete(query, options));
    else await mode(engine, query, options, target, actUi);
    setState('done', 'Done.');
  } catch (e) {
    setState('error', `Error: ${e.message} (${e.code})`);
  }
}

/**
 * The tab the popup acts on: the active one under it, or `?tab=ID` (a popup opened as a page, as
 * the e2e tests do).
 */
async function targetTab() {
  const id = Number(new URLSearchParams(location.search).get('tab'));
  if (id) return chrome.tabs.get(id);
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ?? null;
}

async function init() {
  presets = await loadPresets();
  editor = presetEditor($, presets);
  target = await targetTab();
  const pageTools = target ? await pageToolList(target) : [];
  if (pageTools.length) {
    $('preset').add(new Option(`This page's tools (${pageTools.length})`, PAGE), 0);
  }
  const showPageTools = () => {
    const schemas = pageTools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.inputSchema,
    }));
    $('tools').value = JSON.stringify(schemas, null, 2);
    $('system').value = '';
  };
  const last = saved();
  const known =
    last.preset === 'custom' ||
    presets[Number(last.preset)] ||
    (last.preset === PAGE && pageTools.length);
  $('preset').value = known ? last.preset : pageTools.length ? PAGE : '0';
  if ($('preset').value === PAGE) {
    showPageTools();
    checkTools();
  } else if (last.preset === 'custom') {
    $('tools').value = last.tools || '[]';
    $('system').value = last.system || '';
    checkTools();
  } else {
    editor.apply($('preset').value);
    checkTools();
  }
  if (known && last.query) $('query').value = last.query;
  if (typeof last.extractive === 'boolean') $('extractive').checked = last.extractive;

  $('preset').addEventListener('change', () => {
    if ($('preset').value === PAGE) showPageTools();
    else editor.apply($('preset').value);
    checkTools();
    save();
  });
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
