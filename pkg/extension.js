// needle-web/extension: one engine for a whole Manifest V3 browser extension, loaded once and
// shared by every popup, options page or content page of it.
//
// The engine lives in an offscreen document (`chrome.offscreen`, reason WORKERS), which runs the
// package as a page does (its Web Worker, its threads where allowed); `needle-web/extension/
// service-worker` runs it inside the service worker itself instead. Either way the other pages
// reach it through a `chrome.runtime` Port that carries protocol.js, so what they get from
// `connectEngine()` is a `Needle`: complete (streaming), conversation, run (tool functions run in
// the calling page), extract, generate, chat.completions, tokenize, prepare and loadSnapshot
// (run by the engine's own Needle, beside its snapshot store), abort by signal, and the engine's
// load progress.
//
//   service worker:     onEnsureEngine('engine.html')      (creates the document on request)
//   engine.html's JS:   serveEngine(({ onProgress }) => (needle ??= Needle.load(model, { onProgress })))
//   popup:              const needle = await connectEngine({ onProgress });  needle.complete(...)
import { Needle } from './index.js';
import { makeLogger } from './log.js';
import { NeedleError, REQUEST, Reply, Req, errorToWire } from './protocol.js';
import { checkRequest } from './engine/messages.js';

const PORT = 'needle-web-engine';
const ENSURE = 'needle-web-ensure-engine';

/** The requests a connected page may send: the engine's model and life are the server's. */
const RELAYED = new Set([
  Req.COMPLETE,
  Req.INFO,
  Req.RESET,
  Req.TOKENIZE,
  Req.DETOKENIZE,
  Req.RENDER,
  Req.LOGITS,
]);

/**
 * Whole methods of the engine's Needle a page's request runs (its prefixes are the engine's). A
 * Map, so a type such as `constructor` names nothing.
 */
const METHODS = new Map([
  [
    Req.RELAYED_PREPARE,
    (needle, { tools, system, date }, signal) =>
      needle.prepare({ tools, system, date }, { signal }),
  ],
  [Req.RELAYED_SNAPSHOT, (needle, { source }, signal) => needle.loadSnapshot(source, { signal })],
]);

// A chrome.runtime Port carries JSON, not structured clones: typed arrays (tokenize, logits, a
// snapshot's bytes) cross as their name and values.
const TYPED = new Map([
  ['Uint8Array', Uint8Array],
  ['Uint32Array', Uint32Array],
  ['Float32Array', Float32Array],
]);

function toJson(value) {
  if (!ArrayBuffer.isView(value)) return value;
  return { $typed: value.constructor.name, values: Array.from(value) };
}

function fromJson(value) {
  const make = value && typeof value === 'object' && TYPED.get(value.$typed);
  return make && Array.isArray(value.values) ? make.from(value.values) : value;
}

/** A message with each top-level field passed through `convert` (typed arrays sit there). */
function mapFields(msg, convert) {
  return Object.fromEntries(Object.entries(msg).map(([k, v]) => [k, convert(v)]));
}

/** In the service worker: answers pages' requests for the offscreen engine document. */
export function onEnsureEngine(url) {
  let creating = null;
  const ensure = async () => {
    const existing = await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
    if (existing.length) return;
    creating ??= chrome.offscreen
      .createDocument({
        url,
        reasons: ['WORKERS'],
        justification: 'runs the Needle model in a Web Worker, loaded once for every popup',
      })
      .finally(() => (creating = null));
    await creating;
  };
  answerEnsure(ensure);
}

/** Answers `connectEngine`'s ensure message once `ensure()` resolves. */
export function answerEnsure(ensure) {
  chrome.runtime.onMessage.addListener((msg, _sender, reply) => {
    if (!msg || msg.type !== ENSURE) return false;
    ensure().then(
      () => reply({ ok: true }),
      (e) => reply({ ok: false, message: String(e && e.message) }),
    );
    return true; // the reply comes asynchronously
  });
}

/**
 * Where the engine lives (the offscreen document, or the service worker): serves connected pages.
 * `getNeedle({ onProgress })` returns the loaded Needle (or a promise of it) and is called on every
 * request: keep it memoised, so the model loads once; `onProgress` reaches every page waiting for
 * it. options: `describe(needle)`, fields added to what `info` requests answer (a label, a time).
 */
export function serveEngine(getNeedle, { describe } = {}) {
  const waiting = new Set(); // progress senders of requests waiting for the model
  const onProgress = (p) => {
    for (const send of waiting) send(p);
  };
  chrome.runtime.onConnect.addListener((port) => {
    if (port.name !== PORT) return;
    const running = new Map(); // id -> AbortController
    let open = true;
    port.onDisconnect.addListener(() => {
      open = false;
      for (const ctl of running.values()) ctl.abort(); // a closed popup stops its generation
    });
    const send = (m) => open && port.postMessage(m);
    port.onMessage.addListener(async (msg) => {
      if (!msg || typeof msg !== 'object') return;
      if (msg.type === Req.ABORT) return running.get(msg.target)?.abort();
      const id = Number.isSafeInteger(msg.id) ? msg.id : null;
      const ctl = new AbortController();
      const progress = (p) => send({ type: Reply.PROGRESS, id, ...p });
      if (id !== null) running.set(id, ctl);
      waiting.add(progress);
      try {
        const { type, id: _id, ...payload } = mapFields(msg, fromJson);
        if (!RELAYED.has(type) && !METHODS.has(type)) {
          const name = typeof type === 'string' ? type.slice(0, 80) : `of type ${typeof type}`;
          throw new NeedleError('invalid_argument', `the shared engine does not take '${name}'`);
        }
        // Checked here, before the model is even loaded for it: a page is other code (issue 51).
        checkRequest({ type, id, ...payload });
        const needle = await getNeedle({ onProgress });
        waiting.delete(progress);
        let value = METHODS.has(type)
          ? await METHODS.get(type)(needle, payload, ctl.signal)
          : await needle[REQUEST](type, payload, {
              signal: ctl.signal,
              onToken: (t) => send({ type: Reply.TOKEN, id, token: t.token, text: t.text }),
            });
        if (type === Req.INFO && describe) value = { ...value, ...(await describe(needle)) };
        send({ type: Reply.RESULT, id, value: toJson(value) });
      } catch (e) {
        send({ type: Reply.ERROR, id, error: errorToWire(e) });
      } finally {
        waiting.delete(progress);
        running.delete(id);
      }
    });
  });
}

/** A chrome.runtime Port as the host a Needle client talks to (host/index.js's shape). */
function portHost(port) {
  return {
    relayed: true, // prepare() and loadSnapshot() run on the engine's side (METHODS)
    port: {
      postMessage: (msg) => port.postMessage(mapFields(msg, toJson)),
      set onmessage(fn) {
        port.onMessage.addListener((msg) =>
          fn({
            data: msg && msg.type === Reply.RESULT ? { ...msg, value: fromJson(msg.value) } : msg,
          }),
        );
      },
    },
    // Disposing this page's Needle only disconnects it: the shared engine stays for the others.
    worker: port,
    terminate: () => port.disconnect(),
    onDeath: (cb) => port.onDisconnect.addListener(() => cb('the extension engine went away')),
  };
}

/**
 * In a popup (any extension page): the shared engine as a `Needle`, once its model is loaded
 * (the engine document or service worker starts if it is not running). options: `onProgress`
 * (the model's load, when this page waits for it), `logger`, `logLevel`. `dispose()` disconnects
 * this page; closing it does too (its generations stop).
 */
export async function connectEngine(options = {}) {
  const ready = await chrome.runtime.sendMessage({ type: ENSURE });
  if (!ready || !ready.ok)
    throw new NeedleError(
      'worker_died',
      `the extension engine could not start: ${(ready && ready.message) || 'no answer'}`,
    );
  const needle = new Needle(portHost(chrome.runtime.connect({ name: PORT })), makeLogger(options));
  try {
    await needle[REQUEST](Req.INFO, {}, { onProgress: options.onProgress });
  } catch (e) {
    needle.dispose();
    throw e;
  }
  return needle;
}
