// Firefox ESR (Debian's firefox-esr) through puppeteer-core over WebDriver BiDi.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

export async function launchBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'needle-e2e-firefox-'));
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
    userDataDir: profile,
    protocolTimeout: 600_000,
  });
  const page = (await browser.pages())[0] || (await browser.newPage());
  page.setDefaultTimeout(600_000);
  return {
    name: 'firefox',
    async open(url) {
      await page.goto(url);
      return { evaluate: (f, arg) => page.evaluate(f, arg) };
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
