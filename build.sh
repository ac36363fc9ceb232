#!/usr/bin/env bash
# Builds the browser artefacts: two wasm variants of the core (SIMD128 and baseline), each through
# cargo -> wasm-bindgen -> wasm-opt, into pkg/wasm/{simd,baseline}/. pkg/ picks one at run time.
set -euo pipefail
cd "$(dirname "$0")"
. tools/ensure.sh
ensure_rust_targets wasm32-unknown-unknown
ensure_wasm_bindgen
ensure_npm_dev

# Debian's wasm-opt (binaryen 108) writes modules that fail to load: always use npm's.
WASM_OPT=node_modules/.bin/wasm-opt

build_variant() {
  local name=$1 rustflags=$2
  local target_dir=target/wasm-$name out=pkg/wasm/$name
  echo "== wasm ($name)"
  RUSTFLAGS="$rustflags" CARGO_TARGET_DIR=$target_dir \
    cargo build --release --lib --target wasm32-unknown-unknown --no-default-features --features web
  rm -rf "$out" && mkdir -p "$out"
  wasm-bindgen --target web --no-typescript --out-dir "$out" --out-name needle \
    "$target_dir/wasm32-unknown-unknown/release/needle_web.wasm"
  # No feature flags: wasm-opt reads the module's target_features section. `--all-features` lets it
  # emit encodings engines do not load yet (Node 20 and Chromium: "unknown import kind 0x7f").
  $WASM_OPT -O3 "$out/needle_bg.wasm" -o "$out/needle_bg.wasm"
}

build_variant simd "-C target-feature=+simd128"
build_variant baseline ""
node tools/wasm-sizes.mjs
node tools/package-assets.mjs
