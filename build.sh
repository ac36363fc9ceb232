#!/usr/bin/env bash
# Builds the browser artefacts: four wasm variants of the core (threaded, SIMD128, baseline and
# gpu), each through cargo -> wasm-bindgen -> wasm-opt, into pkg/wasm/{threaded,simd,baseline,gpu}/.
# pkg/ picks one at run time (pkg/engine/build.js chooseBuild, pkg/engine/backend.js for gpu).
# `./build.sh threaded` (or simd, baseline, gpu) rebuilds only the variants named.
set -euo pipefail
cd "$(dirname "$0")"
. tools/ensure.sh
ensure_rust_targets wasm32-unknown-unknown
ensure_wasm_bindgen
ensure_npm_dev

# Debian's wasm-opt (binaryen 108) writes modules that fail to load: always use npm's.
WASM_OPT=node_modules/.bin/wasm-opt

# build_variant NAME RUSTFLAGS [FEATURES] [CARGO ARGS...]
build_variant() {
  local name=$1 rustflags=$2 features=${3:-web}
  local target_dir=target/wasm-$name out=pkg/wasm/$name
  echo "== wasm ($name)"
  # A low inlining threshold (LLVM's default is 225) keeps cold code (loading, parsing,
  # constrained decoding) out of its callers: a ~13% smaller module, the same kernel speed (the
  # SIMD128 kernels inline theirs with #[inline(always)]). Profile [profile.web] in Cargo.toml.
  rustflags="$rustflags -C llvm-args=-inline-threshold=50"
  RUSTFLAGS="$rustflags" CARGO_TARGET_DIR=$target_dir \
    cargo "${@:4}" build --profile web --lib --target wasm32-unknown-unknown --no-default-features --features "$features"
  rm -rf "$out" && mkdir -p "$out"
  wasm-bindgen --target web --no-typescript --out-dir "$out" --out-name needle \
    "$target_dir/wasm32-unknown-unknown/web/needle_web.wasm"
  # No feature flags: wasm-opt reads the module's target_features section. `--all-features` lets it
  # emit encodings engines do not load yet (Node 20 and Chromium: "unknown import kind 0x7f").
  # --no-inline keeps the block of one layer (blocks/stages.rs, `layer_chunk`, never inlined by
  # rustc either) a function of its own: -O3 inlines any function with one caller, and V8 runs
  # a wasm function's optimised code only from its next call on.
  # The pattern matches by name, so a rename would silently drop it: fail instead.
  grep -q layer_chunk "$out/needle_bg.wasm" ||
    { echo "build.sh: no function named *layer_chunk* for wasm-opt --no-inline (renamed?)" >&2; exit 1; }
  $WASM_OPT --no-inline='*layer_chunk*' -O3 "$out/needle_bg.wasm" -o "$out/needle_bg.wasm"
}

# Threads: std rebuilt with atomics (nightly -Z build-std) over one shared, imported memory that
# the thread workers instantiate the module with (src/web/threads.rs); this toolchain does not
# make the memory shared by itself, hence the explicit link arguments. The memory may grow to
# 2 GiB (a shared memory needs a maximum); the TLS exports let wasm-bindgen set up each thread.
threaded_flags() {
  local f="-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128"
  for a in --shared-memory --max-memory=2147483648 --import-memory \
    --export=__wasm_init_tls --export=__tls_size --export=__tls_align --export=__tls_base; do
    f="$f -C link-arg=$a"
  done
  echo "$f"
}

for variant in ${@:-threaded simd baseline gpu}; do
  case "$variant" in
    threaded)
      ensure_nightly_rust_src
      build_variant threaded "$(threaded_flags)" web,threads +nightly -Z build-std=panic_abort,std
      ;;
    simd) build_variant simd "-C target-feature=+simd128" ;;
    baseline) build_variant baseline "" ;;
    # WebGPU through wgpu (its WebGPU backend only: Cargo.toml's wasm32 table), single-threaded,
    # its GPU waits suspending through JSPI: the glue imports ./gpu-wait.js (src/gpu/wait.rs).
    gpu)
      build_variant gpu "-C target-feature=+simd128" web,gpu
      cp src/gpu/gpu-wait.js pkg/wasm/gpu/gpu-wait.js
      ;;
    *) echo "unknown variant $variant (threaded, simd, baseline, gpu)" >&2; exit 2 ;;
  esac
done
node tools/wasm-sizes.mjs
node tools/package-assets.mjs
