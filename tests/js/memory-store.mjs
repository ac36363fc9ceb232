// A caller's own store for the package's storage (the interface pkg/storage/index.js takes),
// over a Map the tests can read: the snapshot tests look at what was stored where.
import { SNAPSHOT_URL } from '../../pkg/storage/snapshots.js';

/** The caller's store: the interface storage/index.js takes, over a Map (`entries`). */
export function memoryStore() {
  const entries = new Map();
  return {
    entries,
    get: async (url) => entries.get(url),
    put: async (url, e) => void entries.set(url, { ...e, bytes: e.bytes.slice() }),
    delete: async (url) => entries.delete(url),
    keys: async () => [...entries.keys()],
  };
}

/** The prefix snapshots `store` holds, as [url, entry] pairs. */
export const snapshotsIn = (store) =>
  [...store.entries].filter(([url]) => url.startsWith(SNAPSHOT_URL));
