// The demo page: pick a model, edit tools, ask, watch tokens stream and tool calls appear.
import { Needle } from './pkg/index.js';
import { splitThinking } from './pkg/markers.js';
import { loadPresets, presetEditor } from './presets.js';
import { answerText, callCards, isRefusal } from './calls.js';
import { initTabs } from './tabs.js';
import { initConversationView } from './conversation-view.js';
import { initAgentView } from './agent-view.js';

let editor = null; // the preset and tools editor (presets.js)

const DEFAULT_MODEL = './models/default.cact';
const $ = (id) => document.getElementById(id);

let needle = null;
let running = null; // AbortController of the generation in flight
let preparing = null; // AbortController of the prepare() in flight

const fmtBytes = (n) =>
  n >= 1 << 30
    ? `${(n / (1 << 30)).toFixed(2)} GB`
    : n >= 1 << 20
      ? `${(n / (1 << 20)).toFixed(1)} MB`
      : `${(n / 1024).toFixed(1)} KB`;
const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

function setState(state, message) {
  document.body.dataset.state = state;
  if (message !== undefined) $('status').textContent = message;
  $('run').disabled = !needle || state === 'running' || state === 'loading';
  $('stop').disabled = state !== 'running';
  $('load').disabled = state === 'loading';
}

// ---- tools editor ----

async function initPresets() {
  editor = presetEditor($, await loadPresets());
  const select = $('preset');
  select.addEventListener('change', () => {
    editor.apply(select.value);
    prepareTools();
  });
  $('tools').addEventListener('input', () => {
    select.value = 'custom';
    editor.checkTools();
  });
  editor.apply('0');
}

// ---- model loading ----

function selectedSource() {
  const kind = document.querySelector('input[name="source"]:checked').value;
  if (kind === 'url') return $('model-url').value.trim() || null;
  if (kind === 'file') return $('model-file').files[0] || null;
  return DEFAULT_MODEL;
}

function showProgress({ phase, loaded, total }) {
  $('progress').hidden = false;
  const pct = total ? Math.min(100, (100 * loaded) / total) : phase === 'init' ? 100 : 50;
  $('progress-fill').style.width = `${pct}%`;
  const label =
    {
      download: 'Downloading',
      cache: 'Reading cache',
      read: 'Reading file',
      init: 'Starting engine',
    }[phase] || phase;
  $('progress-text').textContent =
    phase === 'init'
      ? `${label}…`
      : total
        ? `${label} ${fmtBytes(loaded)} / ${fmtBytes(total)}`
        : `${label} ${fmtBytes(loaded)}`;
}

/**
 * Where the model runs, on which adapter, and backend 'auto''s choice (preparing, calibrating,
 * then measured or remembered; declined), its reason in the tooltip.
 */
function backendText(i) {
  const a = i.adapter;
  const on = a ? ` (${[a.vendor, a.architecture].filter(Boolean).join(' ') || a.description})` : '';
  const where =
    i.backend === 'webgpu'
      ? `WebGPU${on}`
      : `CPU${i.variant === 'gpu' ? `, WebGPU device${on}` : ''}`;
  return i.backend_choice ? `${where} (auto: ${i.backend_choice})` : where;
}

let loadedIn = 0; // ms the last load took

function showModelInfo(i) {
  $('model-info').textContent =
    `Needle ${i.generation} · ${i.depth}/${i.num_layers} layers · d=${i.d_model} · vocab ${i.vocab} · ${i.kv} KV · ` +
    `${fmtBytes(i.bytes)} · ${i.variant}${i.threads > 1 ? ` ×${i.threads}` : ''}` +
    ` · ${backendText(i)} · from ${i.source} · ${fmtMs(loadedIn)}`;
  $('model-info').title = i.backend_reason || '';
  document.body.dataset.backend = i.backend;
  document.body.dataset.backendChoice = i.backend_choice ?? '';
}

/** Backend 'auto' decides after the load, between requests: the line follows it. */
async function followChoice() {
  if (!needle || !['preparing', 'calibrating'].includes(needle.info.backend_choice)) return;
  const i = await needle.refreshInfo().catch(() => null);
  if (i) showModelInfo(i);
}

async function loadModel() {
  const source = selectedSource();
  if (!source) return setState(needle ? 'ready' : 'empty', 'Choose a URL or a file first.');
  if (running) running.abort();
  if (needle) needle.dispose();
  needle = null;
  setState('loading', 'Loading model…');
  const t0 = performance.now();
  try {
    needle = await Needle.load(source, {
      onProgress: showProgress,
      kv: $('kv').value || undefined,
      backend: $('backend').value,
    });
    const i = needle.info;
    loadedIn = performance.now() - t0;
    showModelInfo(i);
    document.body.dataset.modelSource = i.source;
    document.body.dataset.loadMs = String(loadedIn);
    $('progress').hidden = true;
    setState('ready', 'Ready.');
    prepareTools();
  } catch (e) {
    setState('error', `Could not load the model: ${e.message} (${e.code})`);
  }
  refreshCache();
}

// The preset's system prompt and tools, prefilled (or loaded from the snapshot an earlier visit
// stored) while the user types: the question then runs only its own tokens.
const PREPARED = {
  held: 'already in the engine',
  loaded: 'loaded from a stored snapshot',
  saved: 'prefilled, stored for the next visit',
  prefilled: 'prefilled',
};

async function prepareTools() {
  const tools = editor.checkTools();
  if (!needle || tools === null) return;
  if (preparing) preparing.abort();
  const ctl = (preparing = new AbortController());
  const line = $('prepared');
  line.textContent = 'Preparing the tools…';
  document.body.dataset.prepared = 'running';
  const t0 = performance.now();
  try {
    const system = $('system').value || undefined;
    const p = await needle.prepare({ tools, system }, { signal: ctl.signal });
    const tokens = p.tokens ? ` (${p.tokens} tokens)` : '';
    line.textContent = p.snapshot
      ? `Tools prepared${tokens}: ${PREPARED[p.snapshot]}, ${fmtMs(performance.now() - t0)}.`
      : '';
    document.body.dataset.prepared = p.snapshot ?? 'none';
  } catch (e) {
    if (e.name !== 'AbortError') line.textContent = `The tools were not prepared: ${e.message}`;
    document.body.dataset.prepared = 'failed';
  } finally {
    if (preparing === ctl) preparing = null;
  }
  refreshCache();
}

async function refreshCache() {
  const list = $('cached-list');
  const usage = await Needle.cacheUsage().catch(() => null);
  list.replaceChildren();
  if (!usage) return;
  const entries = [...usage.models, ...usage.snapshots];
  $('cache-total').textContent = entries.length
    ? `(${entries.length}, ${fmtBytes(usage.bytes)})`
    : '(none)';
  for (const m of entries) {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.className = 'url';
    name.textContent = m.key
      ? `tools snapshot ${m.key.slice(0, 8)}`
      : new URL(m.url).pathname.split('/').pop() || m.url;
    name.title = m.url;
    const size = document.createElement('span');
    size.className = 'muted';
    size.textContent = fmtBytes(m.bytes);
    const clear = document.createElement('button');
    clear.type = 'button';
    clear.className = 'small';
    clear.textContent = 'Clear';
    clear.addEventListener('click', async () => {
      await Needle.evict(m.url);
      refreshCache();
    });
    li.append(name, size, clear);
    list.append(li);
  }
}

// ---- generation ----

function showText(reasoning, answer) {
  $('reasoning-box').hidden = !reasoning.trim();
  $('reasoning').textContent = reasoning.trim();
  $('answer').textContent = answer.trim();
}

function stat(dl, name, value) {
  const box = document.createElement('div');
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = value;
  dd.dataset.stat = name;
  box.append(dt, dd);
  dl.append(box);
}

function showResult(r, stopped) {
  // `text` is the whole completion; the core has already read the reasoning out of it.
  const { answer } = splitThinking(r.text || '');
  const refused = isRefusal(r, answer);
  // The calls show as cards (a refusal as the Agent tab says it); their markup stays in the raw
  // result below.
  showText(r.reasoning || '', answerText(r, answer));
  const calls = $('calls');
  calls.replaceChildren(...callCards(r.function_calls));
  if (refused) {
    const p = document.createElement('p');
    p.className = 'refusal';
    p.textContent = 'No tool fits this request.';
    calls.append(p);
  }
  if (r.parse_error) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = `No tool call parsed: ${r.parse_error}`;
    calls.append(p);
  }
  const conf = typeof r.confidence === 'number';
  $('confidence-box').hidden = !conf;
  if (conf) {
    $('confidence-fill').style.width = `${(100 * r.confidence).toFixed(1)}%`;
    $('confidence-text').textContent = r.confidence.toFixed(3);
  }
  const dl = $('stats');
  dl.replaceChildren();
  stat(dl, 'tokens/s', r.timings.tokens_per_s.toFixed(1));
  stat(dl, 'prefill', fmtMs(r.timings.prefill_ms));
  stat(dl, 'decode', fmtMs(r.timings.decode_ms));
  stat(dl, 'tokens', `${r.usage.prompt_tokens} prompt + ${r.usage.completion_tokens} generated`);
  const from = r.snapshot
    ? ` (${r.snapshot === 'loaded' ? 'from a snapshot' : 'snapshot stored'})`
    : '';
  stat(dl, 'reused', `${r.usage.cached_tokens} prompt tokens${from}`);
  document.body.dataset.snapshot = r.snapshot ?? 'none';
  document.body.dataset.cachedTokens = String(r.usage.cached_tokens);
  stat(dl, 'KV memory', fmtBytes(r.kv_bytes));
  stat(dl, 'stop', stopped ? 'stopped by you' : r.stop_reason);
  $('result-json').textContent = JSON.stringify(r, null, 2);
}

function requestOptions() {
  const num = (id) => ($(id).value === '' ? undefined : Number($(id).value));
  return {
    tools: editor.checkTools(),
    system: $('system').value || undefined,
    maxTokens: num('max-tokens'),
    temperature: num('temperature'),
    seed: num('seed'),
    topK: num('top-k'),
    topP: num('top-p'),
    constrained: $('constrained').checked,
    extractive: $('extractive').checked,
    valueSearch: $('value-search').checked,
    layers: num('layers'),
    kv: $('kv').value || undefined,
  };
}

async function run(event) {
  event.preventDefault();
  const opts = requestOptions();
  if (!needle || running || opts.tools === null) return;
  running = new AbortController();
  setState('running', 'Generating…');
  showText('', '');
  $('calls').replaceChildren();
  $('stats').replaceChildren();
  $('confidence-box').hidden = true;
  $('result-json').textContent = '';
  let raw = '';
  let count = 0;
  document.body.dataset.streamed = '0';
  const t0 = performance.now();
  try {
    for await (const item of needle.stream($('query').value, { ...opts, signal: running.signal })) {
      if ('token' in item) {
        raw += item.text;
        count += 1;
        document.body.dataset.streamed = String(count);
        const { reasoning, answer } = splitThinking(raw);
        showText(reasoning, answer);
        $('status').textContent =
          `Generating… ${count} tokens, ${((count * 1000) / (performance.now() - t0)).toFixed(1)} tokens/s`;
      } else {
        showResult(item, false);
        setState('done', 'Done.');
      }
    }
  } catch (e) {
    if (e.name === 'AbortError') {
      if (e.result) showResult(e.result, true);
      setState('aborted', 'Stopped.');
    } else {
      setState('error', `Error: ${e.message} (${e.code})`);
    }
  } finally {
    running = null;
    if (document.body.dataset.state === 'running') setState('ready');
    else setState(document.body.dataset.state);
    followChoice();
  }
}

// ---- wiring ----

async function init() {
  await initPresets();
  for (const radio of document.querySelectorAll('input[name="source"]')) {
    radio.addEventListener('change', () => {
      const kind = document.querySelector('input[name="source"]:checked').value;
      $('model-url').hidden = kind !== 'url';
      $('model-file').hidden = kind !== 'file';
    });
  }
  $('model-file').addEventListener('change', loadModel);
  $('load').addEventListener('click', loadModel);
  $('backend').addEventListener('change', () => needle && loadModel());
  $('ask').addEventListener('submit', run);
  $('stop').addEventListener('click', () => running && running.abort());
  $('clear-cache').addEventListener('click', async () => {
    const usage = await Needle.cacheUsage();
    await Promise.all([...usage.models, ...usage.snapshots].map((m) => Needle.evict(m.url)));
    refreshCache();
  });
  initTabs($('tabs'));
  initConversationView({ getNeedle: () => needle, getOptions: requestOptions });
  initAgentView({ getNeedle: () => needle }).catch(
    (e) => ($('agent-status').textContent = `The agent mode is unavailable: ${e.message}`),
  );
  $('isolation').textContent = globalThis.crossOriginIsolated ? '(cross-origin isolated)' : '';
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('./sw.js').catch(() => {});
  setState('empty');
  loadModel();
}

init();
