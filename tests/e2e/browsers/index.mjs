// One small interface over the three browser engines the e2e suite runs in, each driven the way
// its Debian package allows: Chromium (Playwright over CDP), Firefox ESR (puppeteer-core over
// WebDriver BiDi) and WebKitGTK (WebKitWebDriver, classic WebDriver, MiniBrowser under xvfb-run).
//
//   const browser = await launch('firefox');
//   const page = await browser.open(url);        // one page at a time
//   const value = await page.evaluate(async (arg) => ..., arg);   // JSON in, JSON out
//   await browser.close();
//
// NEEDLE_BROWSERS (comma-separated) narrows the engines; an engine not installed is skipped.
import { existsSync } from 'node:fs';

export const ENGINES = {
  chromium: { binary: '/usr/bin/chromium', module: './chromium.mjs' },
  firefox: { binary: '/usr/bin/firefox-esr', module: './firefox.mjs' },
  webkit: { binary: '/usr/bin/WebKitWebDriver', module: './webkit.mjs' },
};

/** The engines to test: those asked for (all by default) whose browser is installed. */
export function engines() {
  const asked = process.env.NEEDLE_BROWSERS ? process.env.NEEDLE_BROWSERS.split(',') : Object.keys(ENGINES);
  return asked.map((name) => ({ name, installed: !!ENGINES[name] && existsSync(ENGINES[name].binary) }));
}

/** Starts `name`'s browser with a fresh profile. */
export async function launch(name) {
  const { launchBrowser } = await import(ENGINES[name].module);
  return launchBrowser();
}

/** Polls `predicate` (evaluated in the page) until it returns a truthy value, which it returns. */
export async function waitFor(page, predicate, arg, { timeoutMs = 120_000, everyMs = 100 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await page.evaluate(predicate, arg);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${predicate}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
