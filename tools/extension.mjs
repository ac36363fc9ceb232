#!/usr/bin/env node
// Assembles the offline browser extension (extension/) into a directory Chromium loads unpacked:
// the popup and options page, the npm package (pkg/: worker engine and its wasm builds), the tool presets and the
// embedded default model and its presets' prefix snapshots (made by the native CLI), with the
// package's version in the manifest. Needs ./build.sh and the CLI (NEEDLE_CLI, default
// target/release/needle: cargo build --release --features cli --bin needle) first.
//
//   node tools/extension.mjs [--out target/extension] [--model www/models/default.cact]
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PKG_FILES = [
  'index.js',
  'protocol.js',
  'markers.js',
  'log.js',
  'models.js',
  'stall.js',
  'storage',
  'host',
  'worker.js',
  'engine',
  'threads.js',
  'thread.js',
  'default-model.js',
  'tools.js',
  'conversation.js',
  'agent.js',
  'repeats.js',
  'extract.js',
  'openai.js',
  'openai-fields.js',
  'structured.js',
  'spawn.js',
  'prepare.js',
  'extension.js',
  'extension-sw.js',
  'webmcp.js',
];
// The worker imports all four builds; an extension page is not cross-origin isolated, so it runs
// the SIMD one (the threaded glue is only loaded, never started), or the gpu one where WebGPU and
// JSPI exist (pkg/engine/backend.js).
const WASM_FILES = [
  'threaded/needle.js',
  'threaded/needle_bg.wasm',
  'simd/needle.js',
  'simd/needle_bg.wasm',
  'baseline/needle.js',
  'baseline/needle_bg.wasm',
  'gpu/needle.js',
  'gpu/gpu-wait.js',
  'gpu/needle_bg.wasm',
];

/**
 * Writes the unpacked extension to `out` (replacing it); returns `{ out }`. `grantAll` (tests
 * only): the optional permissions and every site's host access are asked for at install, so a
 * headless browser, which cannot answer a permission prompt, has them.
 */
export function assembleExtension({
  out = join(ROOT, 'target/extension'),
  model = join(ROOT, 'www/models/default.cact'),
  grantAll = false,
} = {}) {
  const copy = (from, to) => {
    const src = join(ROOT, from);
    if (!existsSync(src)) throw new Error(`${from} is missing (run ./build.sh first)`);
    mkdirSync(dirname(join(out, to)), { recursive: true });
    cpSync(src, join(out, to), { recursive: true });
  };
  rmSync(out, { recursive: true, force: true });
  for (const f of [
    'popup.html',
    'popup.js',
    'popup.css',
    'options.html',
    'options.js',
    'user-model.js',
    'background.js',
    'engine.html',
    'engine.js',
    'act.js',
    'browser-actions.js',
    'page-tools.js',
  ]) {
    copy(`extension/${f}`, f);
  }
  for (const n of [16, 32, 48, 128]) copy(`extension/icons/${n}.png`, `icons/${n}.png`);
  for (const f of PKG_FILES) copy(`pkg/${f}`, `pkg/${f}`);
  for (const f of WASM_FILES) copy(`pkg/wasm/${f}`, `pkg/wasm/${f}`);
  copy('www/presets.js', 'presets.js');
  copy('www/calls.js', 'calls.js');
  copy('www/presets', 'presets');
  if (!existsSync(model)) throw new Error(`${model}: no such model`);
  mkdirSync(join(out, 'models'), { recursive: true });
  cpSync(model, join(out, 'models/default.cact'));
  presetSnapshots(model, join(out, 'snapshots'));

  const manifest = JSON.parse(readFileSync(join(ROOT, 'extension/manifest.json'), 'utf8'));
  manifest.version = JSON.parse(readFileSync(join(ROOT, 'pkg/package.json'), 'utf8')).version;
  if (grantAll) {
    manifest.permissions = [...manifest.permissions, ...manifest.optional_permissions];
    manifest.host_permissions = ['<all_urls>'];
  }
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { out };
}

/**
 * The presets' system + tools prefixes for the embedded model, prefilled ahead of time by the
 * native CLI (`needle snapshot`, the browser's bits), and their list: the engine gives them to
 * Needle.load, so a popup's first request runs only its query.
 */
function presetSnapshots(model, out) {
  const cli = resolve(ROOT, process.env.NEEDLE_CLI || 'target/release/needle');
  if (!existsSync(cli))
    throw new Error(`${cli} is missing (cargo build --release --features cli --bin needle)`);
  mkdirSync(out, { recursive: true });
  const names = readdirSync(join(ROOT, 'www/presets'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
  for (const name of names) {
    const file = join(out, `${name}.snap`);
    execFileSync(cli, ['snapshot', '--model', model, '--preset', name, '--out', file], {
      stdio: 'ignore',
    });
  }
  writeFileSync(
    join(out, 'index.json'),
    `${JSON.stringify(names.map((n) => `${n}.snap`))}
`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? resolve(process.argv[i + 1]) : undefined;
  };
  const { out } = assembleExtension({ out: arg('--out'), model: arg('--model') });
  console.log(`extension: ${out} (load it unpacked from chrome://extensions)`);
}
