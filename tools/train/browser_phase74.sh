#!/usr/bin/env bash
# Phase 74 (issue 49; LOG.md, session 32): phase 72's weights deepened from six layers to eight
# (model_io.deepen: the two new layers copies at half strength, at twice the lr, as phase 48 did
# for the six), then phase 61's recipe (browser_continue.sh, seed 74), 3,000 steps: phases 70-73
# moved the held-out browser requests 44 -> 46 -> 46 -> 45 of 70 whatever the tokenizer, so the
# remaining lever is capacity.
# Starts from out/run72/params.pkl, or where out/ is gone from lineage/phase72.cact (in git at
# f75efd9); resumes from out/run74/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase74.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
FROM=72 LAYERS=8 TRAIN_FLAGS="--new-layer-opening 0.5 --new-layer-lr 2" \
  exec "$here/browser_continue.sh" 74 3000 "$@"
