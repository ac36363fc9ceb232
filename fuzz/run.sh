#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 25) under capped memory, from the committed
# seeds (fuzz/seeds/<target>, plus the committed fixture containers for `container`) and the
# working corpus fuzz/corpus/<target> (ignored by git; it keeps what earlier runs found).
# An allocation past -malloc_limit_mb, an RSS past -rss_limit_mb, a panic or a timeout is a
# finding: libFuzzer writes the input to fuzz/artifacts/<target>/ and this script fails.
# FUZZ_TIMEOUT (default 10 s) is libFuzzer's per-input limit, in wall time: raise it for long runs
# on a shared machine, where a busy neighbour can stretch a 0.6 s input past 10 s.
#   fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-25}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(container tokenizer json schema prompt sampling turns)

# Debug assertions on (-a): an arithmetic overflow panics and is a finding too. No sanitizer:
# the crate is safe Rust, and uninstrumented builds run several times more inputs.
flags=(--sanitizer none --debug-assertions)
cargo +nightly fuzz build "${flags[@]}"
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  seeds=("seeds/$t")
  if [ "$t" = container ]; then
    # The smallest committed fixture of each generation seeds the container reader, beside
    # past findings (seeds/container: each once crashed it).
    mkdir -p corpus/container-seeds
    cp ../tests/fixtures/v3/no_engram_empty_tools/model.cact corpus/container-seeds/v3.cact
    cp ../tests/fixtures/v2/system_eos/model.cact corpus/container-seeds/v2.cact
    seeds=(corpus/container-seeds seeds/container)
  fi
  printf '\n== fuzz %s (%ss)\n' "$t" "$seconds"
  log="artifacts/$t.log"
  status=0
  cargo +nightly fuzz run "${flags[@]}" "$t" "corpus/$t" "${seeds[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=1024 -malloc_limit_mb=256 -timeout="${FUZZ_TIMEOUT:-10}" \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|==[0-9]+== ERROR)' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 30 "$log" >&2
    echo "fuzz $t: finding (exit $status), input in fuzz/artifacts/$t/" >&2
    exit 1
  fi
done
