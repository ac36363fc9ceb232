// Runs the peer's wasm32-wasip1 build (bench/peer) under Node's WASI with the host's file
// system visible at / (it reads the container and the plan by absolute path).
//   node tools/bench/peer-wasi.mjs needle-bench-peer.wasm --model /abs/F.cact --plan /abs/plan.txt
import { readFile } from 'node:fs/promises';
import process from 'node:process';
import { WASI } from 'node:wasi';

const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: [file, ...args],
  env: {},
  preopens: { '/': '/' },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exit(wasi.start(instance));
