#!/usr/bin/env bash
# The two entry points named at the top of README.md.
#   ./dev.sh demo   build everything, then run the main job on the embedded default model
#   ./dev.sh test   install what the tests need, then run every test
set -euo pipefail
cd "$(dirname "$0")"
. tools/ensure.sh

DEFAULT_MODEL=${NEEDLE_MODEL:-tests/fixtures/v3/default/model.cact}

step() { printf '\n== %s\n' "$*"; }

cmd_demo() {
  step "native CLI"
  cargo build --release --features cli --bin needle
  step "wasm packages"
  ./build.sh
  step "needle run on the embedded default model ($DEFAULT_MODEL)"
  target/release/needle inspect --model "$DEFAULT_MODEL"
}

cmd_test() {
  local t0=$SECONDS
  ensure_rust_targets wasm32-unknown-unknown thumbv7em-none-eabihf
  step "cargo test (native, all features but web)"
  cargo test --features cli
  step "core builds without std: wasm32 and bare metal"
  cargo rustc --lib --no-default-features --target wasm32-unknown-unknown --crate-type rlib
  cargo rustc --lib --no-default-features --target thumbv7em-none-eabihf --crate-type rlib
  step "wasm packages (SIMD128 + baseline)"
  ./build.sh
  printf '\nall test stages passed in %ss\n' $((SECONDS - t0))
}

case "${1:-}" in
  demo) cmd_demo ;;
  test) cmd_test ;;
  *) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac
