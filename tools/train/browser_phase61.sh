#!/usr/bin/env bash
# Phase 61 (issue 49; LOG.md, session 26): phase 60's weights (fresh optimiser) on 32,000 new
# examples of its recipe (seed 61, `--plain 0.3`) from the fixed generator, whose productivity
# timers carry their `time_human` again (data54-60 wrote `set_timer` with no arguments there:
# the browser's `set_timer` schema was looked up by name), 2,000 steps of 8 at peak lr 1.5e-4, the
# last 300 QAT, the full-list browser batches packed. Resumes from out/run61/checkpoint.pkl
# when rerun.
# Usage: tools/train/browser_phase61.sh [WORK_DIR]
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=61 SEED=61 PLAIN=0.3 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR=1.5e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=300 STEPS="${STEPS:-2000}" INIT="${INIT:-${1:-$here/out}/run60/params.pkl}"
export TRAIN_FLAGS="--no-initial-val --pack-prefix 256"
exec "$here/browser_phase.sh" "$@"
