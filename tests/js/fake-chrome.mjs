// A fake of the part of `chrome` needle-web/extension uses (runtime messaging, Ports, offscreen),
// its messages JSON-copied and delivered later as a chrome.runtime Port delivers them. Shared by
// the extension tests and the protocol fuzz target (fuzz/protocol.mjs). The functions are also
// sent as source text to a child process (extension.test.mjs): they keep to each other and
// `later`.
export const later = (f) => setImmediate(f);

/** An event as chrome.runtime's: addListener, and here fire(...args) for the fake's own use. */
export function event() {
  const listeners = [];
  return { listeners, addListener: (f) => listeners.push(f), fire: (...a) => listeners.map((f) => f(...a)) };
}

/** A connected pair of chrome.runtime Ports: JSON copies, asynchronous, disconnect told to the other end. */
export function portPair(name) {
  const make = () => ({ name, onMessage: event(), onDisconnect: event(), open: true });
  const ends = [make(), make()];
  ends.forEach((p, i) => {
    const other = ends[1 - i];
    p.postMessage = (m) => {
      if (!p.open) throw new Error('Attempting to use a disconnected port object');
      const copy = JSON.parse(JSON.stringify(m));
      later(() => other.open && other.onMessage.fire(copy));
    };
    p.disconnect = () => {
      if (!p.open) return;
      p.open = other.open = false;
      later(() => other.onDisconnect.fire());
    };
  });
  return ends;
}

/** The part of `chrome` the extension module uses: runtime messaging, ports, offscreen. */
export function fakeChrome() {
  const onConnect = event();
  const onMessage = event();
  const documents = [];
  const engineEnds = []; // the engine's end of each Port, in connection order
  return {
    documents,
    engineEnds,
    runtime: {
      onConnect,
      onMessage,
      connect({ name }) {
        const [page, engine] = portPair(name);
        engineEnds.push(engine);
        later(() => onConnect.fire(engine));
        return page;
      },
      sendMessage: (msg) =>
        new Promise((resolve) => {
          const copy = JSON.parse(JSON.stringify(msg));
          const waits = onMessage.fire(copy, {}, resolve);
          if (!waits.includes(true)) resolve(undefined);
        }),
      getContexts: async () => documents.map(() => ({ contextType: 'OFFSCREEN_DOCUMENT' })),
    },
    offscreen: { createDocument: async (d) => void documents.push(d) },
  };
}
