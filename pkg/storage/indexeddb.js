// The IndexedDB backend: one record per model URL, { bytes, length, sha256, cachedAt }. Used where
// Cache Storage is refused but IndexedDB is not (some embedded webviews, older private modes).
const DB_NAME = 'needle-web-models';
const STORE = 'models';

const promised = (request) =>
  new Promise((ok, fail) => {
    request.onsuccess = () => ok(request.result);
    request.onerror = () => fail(request.error);
  });

function openDb() {
  if (typeof indexedDB === 'undefined' || !indexedDB)
    return Promise.reject(
      Object.assign(new Error('IndexedDB is not available here'), { absent: true }),
    );
  const request = indexedDB.open(DB_NAME, 1);
  request.onupgradeneeded = () => request.result.createObjectStore(STORE);
  return promised(request);
}

/** Opens the backend; rejects where IndexedDB is missing or refused. */
export async function openIndexedDb() {
  const db = await openDb();
  const run = async (mode, act) => {
    const tx = db.transaction(STORE, mode);
    const result = await promised(act(tx.objectStore(STORE)));
    await new Promise((ok, fail) => {
      tx.oncomplete = ok;
      tx.onerror = () => fail(tx.error);
      tx.onabort = () => fail(tx.error || new DOMException('transaction aborted', 'AbortError'));
    });
    return result;
  };
  return {
    kind: 'indexeddb',
    async get(url, { onProgress } = {}) {
      const entry = await run('readonly', (s) => s.get(url));
      if (!entry) return undefined;
      if (onProgress)
        onProgress({ phase: 'cache', loaded: entry.bytes.length, total: entry.bytes.length });
      return entry;
    },
    put: (url, { bytes, sha256, cachedAt }) =>
      run('readwrite', (s) =>
        s.put({ bytes, length: bytes.length, sha256: sha256 ?? null, cachedAt }, url),
      ),
    async delete(url) {
      const had = (await run('readonly', (s) => s.count(url))) > 0;
      if (had) await run('readwrite', (s) => s.delete(url));
      return had;
    },
    keys: async () => (await run('readonly', (s) => s.getAllKeys())).map(String),
    async describe(url) {
      const entry = await run('readonly', (s) => s.get(url));
      return entry && { bytes: entry.length, sha256: entry.sha256, cachedAt: entry.cachedAt };
    },
  };
}
