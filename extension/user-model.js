// The model a user chose for the extension (options page), kept inside the browser: its bytes in
// Cache Storage, what it is in localStorage. The popup runs it instead of the bundled model, still
// offline. The SHA-256 recorded when it was chosen is checked on every read, so a damaged copy
// falls back to the bundled model rather than reaching the engine.
const CACHE = 'needle-extension-model-v1';
// Cache Storage keys must be http(s) URLs; this one is never fetched.
const KEY = 'https://needle-extension.invalid/user-model.cact';
const META = 'needle-extension-model-v1';

/** SHA-256 of `bytes` as hex (an extension page is a secure context: SubtleCrypto is there). */
async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `{ name, bytes, sha256, generation, addedAt }` of the chosen model, or null for the bundled one. */
export function chosenModel() {
  try {
    const meta = JSON.parse(localStorage.getItem(META));
    return meta && typeof meta.sha256 === 'string' ? meta : null;
  } catch {
    return null;
  }
}

/** Keeps `bytes` (already loaded once, so known to be a model) as the extension's model. */
export async function keepModel(bytes, { name, generation }) {
  const sha256 = await sha256Hex(bytes);
  const cache = await caches.open(CACHE);
  await cache.put(
    KEY,
    new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } }),
  );
  const meta = { name, bytes: bytes.length, sha256, generation, addedAt: new Date().toISOString() };
  localStorage.setItem(META, JSON.stringify(meta));
  return meta;
}

/** The chosen model's bytes, or null when none is chosen; throws when the kept copy is damaged. */
export async function readModel() {
  const meta = chosenModel();
  if (!meta) return null;
  const response = await (await caches.open(CACHE)).match(KEY);
  if (!response) throw new Error(`the stored copy of ${meta.name} is gone`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length !== meta.bytes || (await sha256Hex(bytes)) !== meta.sha256) {
    throw new Error(`the stored copy of ${meta.name} is damaged`);
  }
  return bytes;
}

/** Goes back to the bundled model. */
export async function forgetModel() {
  localStorage.removeItem(META);
  await caches.delete(CACHE);
}
