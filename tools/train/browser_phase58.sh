#!/usr/bin/env bash
# Phase 58 (issue 49; LOG.md, sessions 24-25): phase 57's float weights (fresh optimiser) on 32,000
# new examples of its recipe (seed 58), batches of 8 at peak lr 1.5e-4, the last 300 steps QAT.
# Run as it was trained, in three legs: 1,150 steps of a 4,000-step schedule (session 24, cut
# short by the session's end); the schedule shortened to 3,000 so that it ends within session
# 25 (lr 1.23e-4 -> 1.02e-4 at the switch); from step 1,550 the full-list batches packed
# (`--pack-prefix 256`, packing.py: steps 0.38 -> ~0.55 a second on 2 cores). Each leg resumes
# from out/run58/checkpoint.pkl, so rerunning the script after a stop continues where it was.
# Usage: tools/train/browser_phase58.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=58 SEED=58 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR=1.5e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=300 INIT="${INIT:-${1:-$here/out}/run57/params.pkl}"
STEPS=4000 TRAIN_FLAGS="--no-initial-val --stop-at 1150" "$here/browser_phase.sh" "$@"
STEPS=3000 TRAIN_FLAGS="--no-initial-val --stop-at 1550" "$here/browser_phase.sh" "$@"
STEPS=3000 TRAIN_FLAGS="--no-initial-val --pack-prefix 256" exec "$here/browser_phase.sh" "$@"
