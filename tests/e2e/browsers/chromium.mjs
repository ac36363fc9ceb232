// Chromium through Playwright (Debian's /usr/bin/chromium; Playwright never downloads a browser).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'];

export async function launchBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'needle-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: ARGS });
  let page = context.pages()[0] || (await context.newPage());
  return {
    name: 'chromium',
    async open(url) {
      await page.goto(url);
      return { evaluate: (f, arg) => page.evaluate(f, arg) };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
