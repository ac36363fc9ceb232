#!/usr/bin/env bash
# Phase 61 (issue 49; LOG.md, session 26): phase 60's weights (fresh optimiser) on 32,000 new
# examples of its recipe (seed 61, `--plain 0.3`) from the fixed generator, whose productivity
# timers carry their `time_human` again (data54-60 wrote `set_timer` with no arguments there:
# the browser's `set_timer` schema was looked up by name), batches of 8 at peak lr 1.5e-4, the
# last 300 steps QAT, the full-list browser batches packed. Run as it was trained, in two legs:
# 50 steps of a 2,000-step schedule, then the schedule lengthened to 2,500 once the session's
# time allowed it. Each leg resumes from out/run61/checkpoint.pkl, so rerunning the script after
# a stop continues where it was.
# Usage: tools/train/browser_phase61.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=61 SEED=61 PLAIN=0.3 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR=1.5e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=300 INIT="${INIT:-${1:-$here/out}/run60/params.pkl}"
STEPS=2000 TRAIN_FLAGS="--no-initial-val --pack-prefix 256 --stop-at 50" "$here/browser_phase.sh" "$@"
STEPS=2500 TRAIN_FLAGS="--no-initial-val --pack-prefix 256" exec "$here/browser_phase.sh" "$@"
