#!/usr/bin/env bash
# Phase 60 (issue 49; LOG.md, session 25): phase 59's weights (fresh optimiser) on 32,000 new
# examples of its recipe (seed 60, `--plain 0.3`), batches of 8 at peak lr 1.5e-4, the last 300
# steps QAT, the full-list browser batches packed (`--pack-prefix 256`): phase 59's 2,400 steps took
# the held-out set 3 -> 7 of 16 and the generator's requests 60 -> 81 of 160, so the same again,
# longer. Run as it was trained, in two legs: 150 steps of a 4,000-step schedule (session 25),
# then the schedule shortened to 3,200 so that it ends within session 26. Each leg resumes from
# out/run60/checkpoint.pkl, so rerunning the script after a stop continues where it was.
# Usage: tools/train/browser_phase60.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=60 SEED=60 PLAIN=0.3 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR=1.5e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=300 INIT="${INIT:-${1:-$here/out}/run59/params.pkl}"
STEPS=4000 TRAIN_FLAGS="--no-initial-val --pack-prefix 256 --stop-at 150" "$here/browser_phase.sh" "$@"
STEPS=3200 TRAIN_FLAGS="--no-initial-val --pack-prefix 256" exec "$here/browser_phase.sh" "$@"
