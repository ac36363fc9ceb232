#!/usr/bin/env bash
# Phase 58 (issue 49; LOG.md, session 24): phase 57's float weights (fresh optimiser) on 32,000
# new examples of its recipe (seed 58), 4,000 steps of 8 at peak lr 1.5e-4, the last 300 under
# QAT: the long run phases 56-57 showed is needed (full-list browser answer CE fell 3.21 -> 0.30
# in 2,475 steps, forced-exact answers 29/102; the six sit at 0.15 and 38/48). ~3.3 hours on 2 free cores
# (0.34 steps/s); resumable, so it may span sessions: rerun the same command after a stop.
# Usage: tools/train/browser_phase58.sh [WORK_DIR]
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=58 SEED=58 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR=1.5e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=300 STEPS="${STEPS:-4000}" INIT="${INIT:-${1:-$here/out}/run57/params.pkl}"
export TRAIN_FLAGS="--no-initial-val"
exec "$here/browser_phase.sh" "$@"
