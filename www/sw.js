// Keeps the demo working offline: the page, its scripts and the wasm are served from this cache
// when the network is unavailable (network first, so a rebuilt page is picked up when online).
// Models are not handled here: the package keeps them in its own cache, with integrity checks.
const SHELL = 'needle-demo-shell-v10';
const ASSETS = [
  './',
  './index.html',
  './app.js',
  './presets.js',
  './calls.js',
  './tabs.js',
  './turns.js',
  './house.js',
  './conversation-view.js',
  './agent-view.js',
  './presets/smart_home.json',
  './presets/media_player.json',
  './presets/kitchen_appliance.json',
  './presets/productivity.json',
  './presets/wearable.json',
  './presets/data_capture.json',
  './style.css',
  './pkg/index.js',
  './pkg/worker.js',
  './pkg/engine/auto.js',
  './pkg/engine/backend.js',
  './pkg/engine/build.js',
  './pkg/engine/calibrate.js',
  './pkg/engine/call.js',
  './pkg/engine/generate.js',
  './pkg/engine/load.js',
  './pkg/engine/messages.js',
  './pkg/engine/model.js',
  './pkg/engine/prefix.js',
  './pkg/engine/source.js',
  './pkg/protocol.js',
  './pkg/markers.js',
  './pkg/tools.js',
  './pkg/conversation.js',
  './pkg/agent.js',
  './pkg/repeats.js',
  './pkg/extract.js',
  './pkg/openai.js',
  './pkg/openai-fields.js',
  './pkg/structured.js',
  './pkg/spawn.js',
  './pkg/log.js',
  './pkg/models.js',
  './pkg/stall.js',
  './pkg/prepare.js',
  './pkg/host/index.js',
  './pkg/host/local.js',
  './pkg/host/pool.js',
  './pkg/storage/index.js',
  './pkg/storage/cache-api.js',
  './pkg/storage/indexeddb.js',
  './pkg/storage/body.js',
  './pkg/storage/download.js',
  './pkg/storage/sha256.js',
  './pkg/storage/model.js',
  './pkg/storage/snapshots.js',
  './pkg/storage/choices.js',
  './pkg/threads.js',
  './pkg/thread.js',
  './pkg/wasm/threaded/needle.js',
  './pkg/wasm/threaded/needle_bg.wasm',
  './pkg/wasm/simd/needle.js',
  './pkg/wasm/simd/needle_bg.wasm',
  './pkg/wasm/baseline/needle.js',
  './pkg/wasm/baseline/needle_bg.wasm',
  './pkg/wasm/gpu/needle.js',
  './pkg/wasm/gpu/gpu-wait.js',
  './pkg/wasm/gpu/needle_bg.wasm',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then((cache) => cache.addAll(ASSETS))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (
    event.request.method !== 'GET' ||
    url.origin !== location.origin ||
    url.pathname.startsWith('/models/')
  )
    return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(SHELL);
      try {
        const response = await fetch(event.request);
        if (response.ok) cache.put(event.request, response.clone());
        return response;
      } catch (e) {
        const hit = await cache.match(event.request, { ignoreSearch: true });
        if (hit) return hit;
        throw e;
      }
    })(),
  );
});
