// Renders extension/icons/icon.svg to the PNG sizes a Chromium extension needs (16, 32, 48, 128),
// with Debian's Chromium. Run after editing the SVG; the PNGs are committed.
//   node tools/extension-icons.mjs
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
const svg = readFileSync(new URL('../extension/icons/icon.svg', import.meta.url), 'utf8');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
for (const n of [16, 32, 48, 128]) {
  const p = await b.newPage({ viewport: { width: n, height: n } });
  await p.setContent(
    `<style>html,body{margin:0;background:transparent}</style><img src="data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}" width=${n} height=${n}>`,
  );
  await p.screenshot({
    path: new URL(`../extension/icons/${n}.png`, import.meta.url).pathname,
    omitBackground: true,
  });
}
await b.close();
