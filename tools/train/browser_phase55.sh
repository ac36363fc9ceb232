#!/usr/bin/env bash
# Phase 55 (issue 49; LOG.md, session 23): browser_phase.sh with a cheaper recipe. Half the
# examples are the browser's, and 65% of those show only the tools they need plus 0-3 others
# (~330 tokens on average against ~930 for the full list; the rest keep the full list, which the
# held-out set uses); a third length bucket of 512 keeps those short batches narrow. Peak lr 1e-4
# (phase 54's 3e-4 made the replay's loss rise), warmup 20. STEPS as measured in session 23.
# Usage: tools/train/browser_phase55.sh [WORK_DIR]   (resumable, as browser_phase.sh)
export PHASE=55 SEED=55 TRAIN="${TRAIN:-10000}" BROWSER=0.5 SUBSET=0.65 LR=1e-4 WARMUP=20 MID_LEN=512
export STEPS="${STEPS:-600}"
exec "$(dirname "$0")/browser_phase.sh" "$@"
