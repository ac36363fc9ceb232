#!/usr/bin/env bash
# Phase 57 (issue 49; LOG.md, session 24): phase 56's weights at step 875 (fresh optimiser) on
# data with more full tool lists (browser-subset 0.25 instead of 0.65). Phase 56 learnt the
# browser names on short lists, but with the full list (~900 tokens, as the held-out set and a
# real page use it) it wrote one call whatever the request: the query then sits past position
# 850, where the six's prompts (<= 256 tokens) never taught the model to look.
# Usage: tools/train/browser_phase57.sh [WORK_DIR]   (resumable, as browser_phase.sh)
here="$(cd "$(dirname "$0")" && pwd)"
export PHASE=57 SEED=57 TRAIN="${TRAIN:-14000}" BROWSER=0.5 SUBSET=0.25 LR=2e-4 WARMUP=20 MID_LEN=512
export BATCH=8 QAT=200 STEPS="${STEPS:-1600}" INIT="${INIT:-${1:-$here/out}/run56/params.pkl}"
export TRAIN_FLAGS="--no-initial-val"
exec "$here/browser_phase.sh" "$@"
