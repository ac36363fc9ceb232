// Imported in the page by webgpu.test.mjs's backend 'auto' tests: waiting for the choice, and
// turning a remembered one to the GPU as a returning page finds it after a GPU win.

/** info once backend 'auto' has decided (or given up). */
export async function decided(needle) {
  for (;;) {
    const i = await needle.refreshInfo();
    if (!['preparing', 'calibrating'].includes(i.backend_choice)) return i;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Turns the one choice remembered in this profile (storage/choices.js, IndexedDB) to the GPU, so
 * the next load adopts its GPU engine; returns the store's keys.
 */
export async function rememberGpu() {
  const db = await new Promise((ok, fail) => {
    const r = indexedDB.open('needle-web-backend', 1);
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });
  const store = (mode) => db.transaction('choices', mode).objectStore('choices');
  const done = (r) =>
    new Promise((ok, fail) => {
      r.onsuccess = () => ok(r.result);
      r.onerror = () => fail(r.error);
    });
  const keys = await done(store('readonly').getAllKeys());
  const kept = await done(store('readonly').get(keys[0]));
  await done(
    store('readwrite').put({ ...kept, backend: 'webgpu', reason: 'seeded by the test' }, keys[0]),
  );
  db.close();
  return keys;
}
