// Backend 'auto''s remembered choices (engine/auto.js): which backend served a model on an
// adapter, with the calibration's figures, so a returning page decides without calibrating
// again. Keyed by the adapter's identity, the model's SHA-256, this package's version (new
// kernels may change the answer) and the engine's load options (the KV cache, layers, context and
// GPU kernels each change what was measured). Kept in IndexedDB where the engine has it (a worker
// does, localStorage it has not), else in this engine host's memory.
const DB_NAME = 'needle-web-backend';
const STORE = 'choices';

const promised = (request) =>
  new Promise((ok, fail) => {
    request.onsuccess = () => ok(request.result);
    request.onerror = () => fail(request.error);
  });

/**
 * The key of a choice: `adapter` ({ vendor, architecture, device, description }), model, version
 * and `config` (engine/load.js engineConfig: the options that were set, in name order).
 */
export function choiceKey(adapter, sha256, version, config = {}) {
  const a = adapter;
  const set = Object.entries(config)
    .filter(([, v]) => v !== undefined && v !== null)
    .sort(([x], [y]) => (x < y ? -1 : 1));
  return JSON.stringify([
    version,
    sha256,
    a.vendor,
    a.architecture,
    a.device,
    a.description,
    ...set,
  ]);
}

/** A store in memory: `{ get(key), put(key, value) }` (also what tests pass). */
export function memoryChoices() {
  const held = new Map();
  return {
    get: async (key) => held.get(key),
    put: async (key, value) => void held.set(key, value),
  };
}

const inMemory = memoryChoices();

/**
 * The store of choices: IndexedDB, else (missing or refused) this host's memory. A failure to
 * read or write one is no choice remembered, never a failed request.
 */
export async function openChoices(idb = globalThis.indexedDB) {
  if (!idb) return inMemory;
  try {
    const request = idb.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    const db = await promised(request);
    // async: a transaction that cannot start (a closed database) rejects rather than throws.
    const run = async (mode, act) => promised(act(db.transaction(STORE, mode).objectStore(STORE)));
    return {
      get: (key) => run('readonly', (s) => s.get(key)).catch(() => undefined),
      put: (key, value) =>
        run('readwrite', (s) => s.put(value, key)).then(
          () => {},
          () => {},
        ),
    };
  } catch {
    return inMemory;
  }
}
