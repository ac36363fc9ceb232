# Idempotent installers shared by build.sh and dev.sh: each checks first and installs only what is missing.
# Sourced, not run. Everything comes from the package registries this project may reach.

WASM_BINDGEN_VERSION=0.2.130   # must equal the `wasm-bindgen = "=..."` pin in Cargo.toml

ensure_rust_targets() {
  local installed
  installed=$(rustup target list --installed)
  for t in "$@"; do
    grep -qx "$t" <<<"$installed" || rustup target add "$t"
  done
}

ensure_wasm_bindgen() {
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
    # No --locked: the published lockfile does not resolve offline here (see shared/TOOLCHAIN-NOTES.md).
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
}

ensure_npm_dev() {
  # binaryen (wasm-opt) and playwright-core, pinned in the top-level package.json.
  if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ]; then
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
  fi
}

ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null
  fi
}

ensure_cargo_fuzz() {
  # The fuzz crate (fuzz/) needs nightly (libFuzzer's -Z flags) and cargo-fuzz; nothing else does.
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
}
