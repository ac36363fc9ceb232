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

ensure_nightly_rust_src() {
  # The threaded wasm build rebuilds std with atomics: nightly and its sources.
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  # (-Z build-std compiles the target's std from these sources: no `rustup target add` needed.)
  rustup component list --toolchain nightly --installed | grep -qx rust-src || rustup component add rust-src --toolchain nightly
}

ensure_wasm_bindgen() {
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
    # No --locked: with it this install fails on the project's machines (the crate's published
    # lockfile does not resolve against the registry they reach); without it cargo takes current
    # semver-compatible dependencies, and the CLI is still exactly $WASM_BINDGEN_VERSION (~140 s).
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
}

ensure_npm_dev() {
  # The devDependencies pinned in the top-level package.json (binaryen's wasm-opt, playwright-core,
  # the bundlers, typescript, publint): installed again whenever the lockfile is newer than the
  # install npm recorded in node_modules/.package-lock.json.
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
  fi
}

ensure_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null
  fi
}

ensure_lavapipe() {
  # The GPU backend's tests (tests/gpu_parity.rs, tests/gpu_backend.rs) run natively on Mesa's
  # lavapipe, a Vulkan driver on the CPU, through the Vulkan loader.
  if [ ! -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || [ ! -e /usr/lib/x86_64-linux-gnu/libvulkan.so.1 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q mesa-vulkan-drivers libvulkan1 >/dev/null
  fi
}

ensure_browsers() {
  # The e2e browser matrix beyond Chromium (tests/e2e/browsers.test.mjs): Firefox ESR, driven over
  # WebDriver BiDi by puppeteer-core, and WebKitGTK's WebKitWebDriver, whose MiniBrowser (in
  # libwebkit2gtk-4.1-0, a dependency) has no headless mode and runs under xvfb-run (which needs xauth).
  local missing=()
  [ -x /usr/bin/firefox-esr ] || missing+=(firefox-esr)
  [ -x /usr/bin/WebKitWebDriver ] || missing+=(webkit2gtk-driver)
  command -v xvfb-run >/dev/null || missing+=(xvfb)
  command -v xauth >/dev/null || missing+=(xauth)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
  fi
}

ensure_cargo_fuzz() {
  # The fuzz crate (fuzz/) needs nightly (libFuzzer's -Z flags) and cargo-fuzz; nothing else does.
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
}
