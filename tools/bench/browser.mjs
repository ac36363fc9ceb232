// What the Chromium benchmarks share: the demo's server (cross-origin isolated: precise timers,
// SharedArrayBuffer for a threaded build) with tools/bench/ at /bench/ and the container at
// /models/default.cact, and headless Debian Chromium.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../serve.mjs';

const here = resolve(fileURLToPath(new URL('.', import.meta.url)));

/** `{ server, browser, close() }` for the container at `model`; pages open `bench/page.html`. */
export async function benchBrowser(model) {
  const server = await startServer({ port: 0, model: resolve(model), mounts: [['/bench/', here]] });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  return {
    server,
    browser,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}
