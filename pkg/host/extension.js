// A browser extension's engine, loaded once and shared by every popup opening (Manifest V3).
// The service worker has no Worker and no import(), so the engine lives in an offscreen document
// (`chrome.offscreen`, reason WORKERS) that runs the package as a page does; popups and other
// extension pages reach it through a `chrome.runtime` Port, with explicit abort messages.
//
//   service worker:     onEnsureEngine('engine.html')            (creates the document on request)
//   engine.html's JS:   serveEngine(() => Needle.load(model))     (the model loads on first use)
//   popup:              const engine = await connectEngine();     engine.complete(query, options)
import { NeedleError, Reply, Req, errorFromWire, errorToWire } from '../protocol.js';

const PORT = 'needle-web-engine';
const ENSURE = 'needle-web-ensure-engine';

/** In the service worker: answers popups' requests for the offscreen engine document. */
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
 * In the engine document: serves popups. `getNeedle()` returns the loaded Needle (called on every
 * request; keep it memoised, so the model loads once).
 */
export function serveEngine(getNeedle) {
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
      if (msg.type === Req.ABORT) return running.get(msg.target)?.abort();
      const ctl = new AbortController();
      running.set(msg.id, ctl);
      try {
        const needle = await getNeedle();
        const value =
          msg.type === Req.INFO
            ? needle.info
            : await needle.complete(msg.query, {
                ...msg.options,
                signal: ctl.signal,
                onToken: (t) => send({ id: msg.id, type: Reply.TOKEN, ...t }),
              });
        send({ id: msg.id, type: Reply.RESULT, value });
      } catch (e) {
        send({ id: msg.id, type: Reply.ERROR, error: errorToWire(e) });
      } finally {
        running.delete(msg.id);
      }
    });
  });
}

/** In a popup: the shared engine (the offscreen document is created if it is not there yet). */
export async function connectEngine() {
  const ready = await chrome.runtime.sendMessage({ type: ENSURE });
  if (!ready || !ready.ok)
    throw new NeedleError(
      'worker_died',
      `the engine document could not start: ${ready && ready.message}`,
    );
  const port = chrome.runtime.connect({ name: PORT });
  const pending = new Map();
  let nextId = 1;
  port.onMessage.addListener((msg) => {
    const p = pending.get(msg.id);
    if (!p) return;
    if (msg.type === Reply.TOKEN)
      return p.onToken && p.onToken({ token: msg.token, text: msg.text });
    pending.delete(msg.id);
    if (msg.type === Reply.RESULT) p.resolve(msg.value);
    else p.reject(errorFromWire(msg.error));
  });
  port.onDisconnect.addListener(() => {
    for (const p of pending.values())
      p.reject(new NeedleError('worker_died', 'the engine document went away'));
    pending.clear();
  });
  const call = (payload, { signal, onToken } = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject, onToken });
      if (signal)
        signal.addEventListener('abort', () => port.postMessage({ type: Req.ABORT, target: id }), {
          once: true,
        });
      port.postMessage({ id, ...payload });
    });
  return {
    /** The model's info, as `needle.info` (loading the model first if this is the first use). */
    info: () => call({ type: Req.INFO }),
    /** As `needle.complete`; `signal` sends an abort message. Functions other than onToken stay here. */
    complete: (query, { signal, onToken, ...options } = {}) =>
      call({ type: Req.COMPLETE, query, options }, { signal, onToken }),
    close: () => port.disconnect(),
  };
}
