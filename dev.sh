#!/usr/bin/env bash
# The two entry points named at the top of README.md.
#   ./dev.sh demo   build everything, then run the main job on the embedded default model
#   ./dev.sh test   install what the tests need, then run every test
#   ./dev.sh bench  [--v2] [--quick] [--runs N] [--only a,b] [--kv f32] [--threads 1,2,4]  the side-by-side benchmark (BENCHMARKS.md)
#   ./dev.sh fuzz [SECONDS] [TARGET...]   run the fuzz targets longer (default 600 s each; `protocol`: fuzz/protocol.mjs)
#   ./dev.sh soak [REQUESTS]   one worker-hosted instance under mixed requests (default 10,000)
set -euo pipefail
cd "$(dirname "$0")"
. tools/ensure.sh

# The embedded default model: the small Needle 3 trained on upstream's tool environments
# (tools/train/), or a reference fixture until that file exists.
DEFAULT_MODEL=${NEEDLE_MODEL:-www/models/default.cact}
[ -f "$DEFAULT_MODEL" ] || DEFAULT_MODEL=tests/fixtures/v3/local_global_taps/model.cact

step() { printf '\n== %s\n' "$*"; }

cmd_demo() {
  step "native CLI"
  cargo build --release --features cli --bin needle
  step "wasm packages and the browser extension"
  ./build.sh
  node tools/extension.mjs --model "$DEFAULT_MODEL"
  step "the CLI on the embedded default model ($DEFAULT_MODEL)"
  target/release/needle run --model "$DEFAULT_MODEL" --preset smart_home --query "Turn on the kitchen lights" --max-tokens 48
  step "demo page on http://127.0.0.1:${PORT:-8080}/ (Ctrl-C stops it)"
  exec node tools/serve.mjs --port "${PORT:-8080}" --model "$DEFAULT_MODEL"
}

cmd_test() {
  local t0=$SECONDS
  ensure_rust_targets wasm32-unknown-unknown wasm32-wasip1 thumbv7em-none-eabihf
  step "formatting and lint: cargo fmt, clippy (default, cli, gpu, web on wasm32, threads), biome (JS)"
  cargo fmt --check
  cargo clippy --lib -- -D warnings
  cargo clippy --all-targets --features cli -- -D warnings
  cargo clippy --all-targets --features cli,gpu -- -D warnings
  cargo clippy --lib --no-default-features --features web --target wasm32-unknown-unknown -- -D warnings
  cargo clippy --lib --no-default-features --features web,gpu --target wasm32-unknown-unknown -- -D warnings
  CARGO_TARGET_DIR=target/native-threads cargo clippy --all-targets --features cli,threads -- -D warnings
  ensure_npm_dev
  node_modules/.bin/biome ci .
  step "cargo test (native, the cli feature)"
  cargo test --no-fail-fast --features cli
  step "GPU backend (wgpu) on Mesa's lavapipe: Needle 3 fixtures' parity, the session, typed failures"
  ensure_lavapipe
  # NEEDLE_REQUIRE_GPU=1: a missing adapter fails these suites instead of skipping them.
  NEEDLE_REQUIRE_GPU=1 cargo test --no-fail-fast --features cli,gpu --test gpu_parity --test gpu_backend
  NEEDLE_REQUIRE_GPU=1 cargo test --no-fail-fast --features cli,gpu --lib gpu::
  step "threads (native): work split across a rayon pool gives the one-thread bits; parity suites with the feature on"
  CARGO_TARGET_DIR=target/native-threads cargo test --no-fail-fast --features cli,threads \
    --lib --test threads --test v3_parity --test v2_parity
  step "fuzz smoke run: every target ${FUZZ_SECONDS:-20} s under capped memory (./dev.sh fuzz for longer)"
  ensure_cargo_fuzz
  fuzz/run.sh "${FUZZ_SECONDS:-20}"
  step "core builds without std: wasm32 and bare metal"
  cargo rustc --lib --no-default-features --target wasm32-unknown-unknown --crate-type rlib
  cargo rustc --lib --no-default-features --target thumbv7em-none-eabihf --crate-type rlib
  step "kernel twins on wasm32 (SIMD128, then scalar) under Node's WASI"
  for flags in "-C target-feature=+simd128" ""; do
    RUSTFLAGS="$flags" CARGO_TARGET_DIR="target/wasi${flags:+-simd}" \
      CARGO_TARGET_WASM32_WASIP1_RUNNER="node tools/wasi-run.mjs" \
      cargo test --target wasm32-wasip1 --lib kernels::
  done
  step "wasm packages (threaded, SIMD128, baseline, gpu)"
  ./build.sh
  step "size budget: the wasm modules within the fixed limits of tools/size-budget.json"
  node tools/size-budget.mjs
  step "protocol fuzz smoke: random messages to the engine host and an extension (${FUZZ_SECONDS:-20} s)"
  node fuzz/protocol.mjs "${FUZZ_SECONDS:-20}" # needs the wasm packages: after ./build.sh
  # --- JS package and browser tests (web helper): compare against the native CLI ---
  step "JS package tests (node --test, wasm vs native CLI)"
  cargo build --release --features cli --bin needle
  NEEDLE_MODEL="$DEFAULT_MODEL" node --test --test-timeout=600000 tests/js/
  step "browser end-to-end (Debian chromium + playwright-core; the matrix adds firefox-esr and WebKitGTK)"
  ensure_chromium
  ensure_browsers
  NEEDLE_MODEL="$DEFAULT_MODEL" node --test --test-timeout=600000 tests/e2e/
  step "bundlers: Vite 8, 7, 6 (build, dev server), webpack 5, esbuild, Rollup, a plain page; run in Chromium"
  node --test --test-timeout=600000 tests/bundlers/
  printf '\nall test stages passed in %ss\n' $((SECONDS - t0))
}

# The shipped-geometry container of generation $1 (v3 | v2): reused, else generated once with
# upstream's exporter in the pinned reference venv (a few minutes; never committed).
bench_container() {
  local gen=$1 file
  case "$gen" in
    v3) file=bench/needle3-shipped-w4.cact ;;
    v2) file=bench/needle2-shipped-w4.cact ;;
  esac
  if [ ! -f "$file" ]; then
    tools/reference/make_venv.sh "$gen" >&2
    local script=tools/reference/shipped_geometry.py
    [ "$gen" = v2 ] && script=tools/reference/shipped_geometry_v2.py
    "tools/reference/.venv-$gen/bin/python" "$script" --heads all --out "$file" >&2
  fi
  echo "$file"
}

cmd_bench() {
  # --v2: the Needle 2 container, f32 KV (the peer's Needle 2 has no int8 cache).
  local gen=v3 extra=()
  if [ "${1:-}" = --v2 ]; then gen=v2 extra=(--kv f32); shift; fi
  ensure_rust_targets wasm32-unknown-unknown wasm32-wasip1
  ensure_npm_dev
  ensure_chromium
  step "the shipped-geometry container (bench/, generated once)"
  local model
  model=$(bench_container "$gen")
  step "needle-web: the native CLI (one thread and threaded) and the wasm packages"
  cargo build --release --features cli --bin needle
  CARGO_TARGET_DIR=target/native-threads cargo build --release --features cli,threads --bin needle
  CARGO_TARGET_DIR=target/gpu cargo build --release --features cli,gpu --bin needle
  ./build.sh
  step "the peer (bench/peer: needle-infer 0.3.1), native and wasm32-wasip1 with SIMD128"
  (cd bench/peer && cargo build --release &&
    RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasi-simd cargo build --release --target wasm32-wasip1)
  step "the benchmark: runs interleaved, medians (tools/bench/run.mjs)"
  local t0=$SECONDS
  node tools/bench/run.mjs --model "$model" "${extra[@]}" "$@"
  printf '\nbench ran in %ss (the table is also in bench/out/table.md)\n' $((SECONDS - t0))
}

cmd_fuzz() {
  # TARGET `protocol` is the JS one (fuzz/protocol.mjs); the others are fuzz/run.sh's.
  local seconds=${1:-600} rust=() js=0
  for t in "${@:2}"; do if [ "$t" = protocol ]; then js=1; else rust+=("$t"); fi; done
  [ $# -gt 1 ] || js=1
  if [ $# -le 1 ] || [ ${#rust[@]} -gt 0 ]; then
    ensure_cargo_fuzz
    fuzz/run.sh "$seconds" "${rust[@]}"
  fi
  [ "$js" = 0 ] || { ./build.sh && node fuzz/protocol.mjs "$seconds"; }
}

cmd_soak() {
  step "wasm package (SIMD128)"
  ./build.sh simd
  step "soak: ${1:-10000} requests, memory every 500 (tools/soak/soak.mjs)"
  node --expose-gc tools/soak/soak.mjs "${1:-10000}"
}

case "${1:-}" in
  demo) cmd_demo ;;
  test) cmd_test ;;
  bench) shift; cmd_bench "$@" ;;
  fuzz) shift; cmd_fuzz "$@" ;;
  soak) shift; cmd_soak "$@" ;;
  *) echo "usage: $0 demo|test|bench|fuzz [SECONDS] [TARGET...]|soak [REQUESTS]" >&2; exit 2 ;;
esac
