#!/usr/bin/env bash
# Phase 59 (issue 49; LOG.md, session 25): phase 58's weights (fresh optimiser) on 32,000 new
# examples of its recipe (seed 59) with a share 0.3 of the requests bare (`datagen.py --plain`,
# phase 53: short requests were 65-86% refusals in data58), batches of 8 at peak lr 1.5e-4, the
# last 300 steps QAT, the full-list browser batches packed from the start (`--pack-prefix 256`).
# Run as it was trained, in two legs: 375 steps of a 3,000-step schedule, then the schedule
# shortened to 2,400 so that it ends within session 25. Each leg resumes from
# out/run59/checkpoint.pkl, so rerunning the script after a stop continues where it was.
# Usage: tools/train/browser_phase59.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=59 SEED=59 PLAIN=0.3 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR=1.5e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=300 INIT="${INIT:-${1:-$here/out}/run58/params.pkl}"
STEPS=3000 TRAIN_FLAGS="--no-initial-val --pack-prefix 256 --stop-at 375" "$here/browser_phase.sh" "$@"
STEPS=2400 TRAIN_FLAGS="--no-initial-val --pack-prefix 256" exec "$here/browser_phase.sh" "$@"
