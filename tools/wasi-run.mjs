// Cargo runner for wasm32-wasip1 test binaries: runs the module under Node's WASI with the
// current environment and the test harness's arguments, and exits with its status.
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node tools/wasi-run.mjs" cargo test --target wasm32-wasip1
import { readFile } from 'node:fs/promises';
import process from 'node:process';
import { WASI } from 'node:wasi';

const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: [file, ...args],
  env: process.env,
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exit(wasi.start(instance));
