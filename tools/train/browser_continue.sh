#!/usr/bin/env bash
# Phase 61's recipe continued (issue 49; LOG.md, sessions 26-27): phase PHASE starts from phase
# PHASE-1's weights (fresh optimiser) on 32,000 new examples (seed PHASE, `--plain 0.3`, half of
# them browser requests, a quarter of those with a short tool list), batches of 8 at peak lr
# 1.5e-4, the last 300 steps QAT, the full-list browser batches packed. Resumes from
# out/runPHASE/checkpoint.pkl when rerun on the same machine (out/ has not outlived a session's
# machine, sessions 28 and 36, so a phase's STEPS should fit one session). The phases it ran as
# `browser_continue.sh PHASE STEPS` (LOG.md says why each ran and what it measured), with the
# commit that holds the container each starts from where out/ is gone (`git checkout COMMIT --
# tools/train/lineage/phaseFROM.cact`, FROM = PHASE-1 unless set):
#   62 3000, 63 2000 (their starts were lost with out/, session 28), 66 3000 (7c62dbf),
#   67 2000 (e08e03d), 68 3000 (023d5c9), 69 1800 (6c87a52), 70 3000 (368f00d), 71 1200 (20f3857),
#   72 3000 (8ed3769), 75 2000 with LAYERS=8 (a23ef71), 77 3000 with LAYERS=10
#   DATAGEN_FLAGS="--browser-invalid-balanced" (1289ce9). Deepened (new layers copies at half
#   strength, twice the lr: TRAIN_FLAGS="--new-layer-opening 0.5 --new-layer-lr 2"): 74 3000 with
#   FROM=72 LAYERS=8 (f75efd9), 76 3000 with FROM=74 LAYERS=10 (a23ef71), 78 1800 with FROM=76
#   LAYERS=12 DATAGEN_FLAGS="--browser-invalid-balanced" (1289ce9). With browser_phrasings.py's
#   round: 79 2000 with FROM=76 LAYERS=10 DATAGEN_FLAGS="--browser-invalid-balanced
#   --browser-phrasings" (1289ce9), 80 2000 with LAYERS=10 and the same DATAGEN_FLAGS (6ec1609).
#   With browser_values.py's round too: 81 2000 with LAYERS=10 DATAGEN_FLAGS="--browser-invalid-balanced
#   --browser-phrasings --browser-values" (db2d275), 82 2000 with LAYERS=10 and those DATAGEN_FLAGS
#   plus "--browser-values-repeat 3" (d758e89), 83 2000 with LAYERS=10 and those DATAGEN_FLAGS plus
#   "--browser-refusals" (5fa9e02). Phases 65 and 73
#   (browser_phase65.sh, browser_phase73.sh) change more.
# Usage: tools/train/browser_continue.sh PHASE STEPS [WORK_DIR]   (STEPS=..., LR=... and INIT=...
#        override the steps, the peak lr and the starting weights, FROM=N starts from phase N's
#        instead of PHASE-1's; LAYERS=..., TOKENIZER=..., TRAIN_FLAGS=... and DATAGEN_FLAGS=...
#        pass on to browser_phase.sh, the flags after these)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
phase="$1" steps="$2"
shift 2
export PHASE="$phase" SEED="$phase" PLAIN=0.3 TRAIN="${TRAIN:-32000}" BROWSER=0.5 SUBSET=0.25 LR="${LR:-1.5e-4}" WARMUP=20 MID_LEN=512
# The previous phase's (or FROM's) float weights, or where out/ was lost (LOG.md, session 28) its
# container as committed in lineage/ (the CQ weights the model answers with).
from="${FROM:-$((phase - 1))}"
prev="${1:-$here/out}/run$from/params.pkl"
committed="$here/lineage/phase$from.cact"
if [ ! -f "$prev" ] && [ -f "$committed" ]; then
  prev="$committed"
fi
export BATCH=8 QAT=300 STEPS="${STEPS:-$steps}" INIT="${INIT:-$prev}"
export TRAIN_FLAGS="--no-initial-val --pack-prefix 256 ${TRAIN_FLAGS:-}"
exec "$here/browser_phase.sh" "$@"
