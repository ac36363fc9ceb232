#!/usr/bin/env bash
# Phase 56 (issue 49; LOG.md, session 24): phase 55 continued (its float weights, fresh
# optimiser) on new data of the same recipe (seed 56), learning faster: batch 8 instead of 16
# (twice the updates for the same compute), peak lr 3e-4, float steps with a QAT tail of 200.
# Phase 55 after 320 steps still had answer-token CE 1.7 on short browser prompts (the six: 0.27).
# Usage: tools/train/browser_phase56.sh [WORK_DIR]   (resumable, as browser_phase.sh)
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=56 SEED=56 TRAIN="${TRAIN:-14000}" BROWSER=0.5 SUBSET=0.65 LR=3e-4 WARMUP=30 MID_LEN=512
export BATCH=8 QAT=200 STEPS="${STEPS:-2400}" INIT="${INIT:-${1:-$here/out}/run55/params.pkl}"
# Stopped at step 875 of its 2,400-step schedule (lr 2.2e-4) for phase 57.
export TRAIN_FLAGS="--no-initial-val --stop-at 875"
exec "$here/browser_phase.sh" "$@"
