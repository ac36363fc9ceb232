#!/usr/bin/env bash
# Phase 61's recipe continued (issue 49; LOG.md, sessions 26-27): phase PHASE starts from phase
# PHASE-1's weights (fresh optimiser) on 32,000 new examples (seed PHASE, `--plain 0.3`, half of
# them browser requests, a quarter of those with a short tool list), batches of 8 at peak lr
# 1.5e-4, the last 300 steps QAT, the full-list browser batches packed. browser_phase62.sh and
# on name each phase's length and why it ran. Resumes from out/runPHASE/checkpoint.pkl when rerun.
# Usage: tools/train/browser_continue.sh PHASE STEPS [WORK_DIR]   (STEPS=..., LR=... and INIT=...
#        override the steps, the peak lr and the starting weights)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
phase="$1" steps="$2"
shift 2
export PHASE="$phase" SEED="$phase" PLAIN=0.3 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR="${LR:-1.5e-4}" WARMUP=20 MID_LEN=512
# The previous phase's float weights, or where out/ was lost (LOG.md, session 28) its container
# as committed in lineage/ (the CQ weights the model answers with).
prev="${1:-$here/out}/run$((phase - 1))/params.pkl"
committed="$here/lineage/phase$((phase - 1)).cact"
if [ ! -f "$prev" ] && [ -f "$committed" ]; then
  prev="$committed"
fi
export BATCH=8 QAT=300 STEPS="${STEPS:-$steps}" INIT="${INIT:-$prev}"
export TRAIN_FLAGS="--no-initial-val --pack-prefix 256"
exec "$here/browser_phase.sh" "$@"
