#!/usr/bin/env bash
# The benchmark on a lent machine with a GPU (the `device` tool: one H200, 16 cores, no package
# registry, no browser, 64 MiB carried a call), in one call, for issue 40 (the native GPU path
# against the native CPU path on one thread) and issue 41 (the CPU path on 1 to 16 threads).
#
#   tools/bench/device.sh prepare       here: builds the three CLIs, writes the requests, fetches
#                                       the Vulkan loader and cactus-needle's wheel, prints the call
#   tools/bench/device.sh run           there: makes the shipped container with upstream's exporter
#                                       (jax and flax are in that machine's image), then runs
#                                       every variant; records to $OUT/results.jsonl, log to $OUT/log
#   tools/bench/device.sh table FILE    here: the medians and speed-ups (tools/bench/report.mjs)
#
# The shipped container (67 MB) is over what a call carries, so it is made there, from the same
# seed (20 s here). `run` also runs here (lavapipe instead of a GPU) as a rehearsal:
# `OUT=/tmp/o DEVICE_MODEL=www/models/default.cact tools/bench/device.sh run` (DEVICE_RUNS: runs
# a variant, default 3; PYTHON: the interpreter that makes the container, default python3).
set -uo pipefail
cd "$(dirname "$0")/../.."

CARRY=(.gl .whl target/release/needle target/native-threads/release/needle
  target/gpu/release/needle bench/out/requests.json)
THREADS=(1 2 4 8 16)
RUNS=${DEVICE_RUNS:-3}

prepare() {
  set -e
  cargo build --release --features cli --bin needle
  CARGO_TARGET_DIR=target/native-threads cargo build --release --features cli,threads --bin needle
  CARGO_TARGET_DIR=target/gpu cargo build --release --features cli,gpu --bin needle
  mkdir -p bench/out
  node -e "import('./tools/bench/workload.mjs').then((m) =>
    require('node:fs').writeFileSync('bench/out/requests.json', JSON.stringify(m.workload())))"
  for d in .gl .whl; do grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude; done
  if [ ! -d .gl ]; then
    # The Vulkan loader (the device README's recipe): the machine has NVIDIA's driver only.
    local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    mkdir -p .gl /tmp/amd64/partial
    # shellcheck disable=SC2086
    apt-get $o update >/dev/null && (cd .gl && apt-get $o download libvulkan1)
  fi
  if [ ! -d .whl ]; then
    local pin
    pin=$(grep -i '^cactus-needle==' tools/reference/requirements-v3.txt)
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp -d .whl "$pin"
  fi
  du -shc "${CARRY[@]}" | tail -n 1
  printf '\nthe device call (carry: %s):\n  bash tools/bench/device.sh run\n' "${CARRY[*]}"
}

# One variant's runs: each line of `needle bench` tagged with the variant and the run.
measure() {
  local name=$1
  shift
  for r in $(seq 1 "$RUNS"); do
    echo "== $name, run $r" >>"$OUT/log"
    "$@" 2>>"$OUT/log" | sed "s/^{/{\"variant\":\"$name\",\"run\":$r,/" >>"$OUT/results.jsonl"
  done
}

run() {
  : "${OUT:?OUT: the folder the records go to}"
  exec > >(tee -a "$OUT/log") 2>&1
  if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
      export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
  nproc
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  local model=${DEVICE_MODEL:-bench/needle3-shipped-w4.cact}
  if [ ! -f "$model" ]; then
    local py=${PYTHON:-python3}
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || exit 1
    PYTHONPATH=/tmp/site JAX_PLATFORMS=cpu "$py" tools/reference/shipped_geometry.py \
      --heads all --out "$model" || exit 1
  fi
  local req=bench/out/requests.json
  local bench=(bench --model "$model" --requests "$req")
  [ -f "$req" ] || { echo "no $req: run 'prepare' here first" >&2; exit 1; }
  : >"$OUT/results.jsonl"
  # Every kernel variant (src/gpu/README.md): the cost model chose the shapes, this measures them.
  for k in plain tiled subgroup; do
    NEEDLE_GPU_KERNELS=$k measure "native-gpu-$k" target/gpu/release/needle "${bench[@]}" --backend gpu
  done
  measure native target/release/needle "${bench[@]}"
  for t in "${THREADS[@]}"; do
    RAYON_NUM_THREADS=$t measure "native-threaded-t$t" target/native-threads/release/needle "${bench[@]}"
  done
  grep -c '"kind":"request"' "$OUT/results.jsonl"
}

table() {
  node --input-type=module -e "
    import { readFileSync } from 'node:fs';
    import { summarize, table } from './tools/bench/report.mjs';
    const rows = readFileSync(process.argv[1], 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const names = [...new Set(rows.map((r) => r.variant))];
    const variants = names.map((name) => {
      const mine = rows.filter((r) => r.variant === name);
      const runs = [...new Set(mine.map((r) => r.run))].map((n) => mine.filter((r) => r.run === n));
      return { name, side: 'ours', env: 'native', runs, errors: [] };
    });
    process.stdout.write(table(summarize(variants)));
  " "$1"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  table) table "${2:?table FILE}" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
