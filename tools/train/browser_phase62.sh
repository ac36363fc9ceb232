#!/usr/bin/env bash
# Phase 62 (issue 49; LOG.md, session 26): phase 61's weights (fresh optimiser) on 32,000 new
# examples of its recipe (seed 62, `--plain 0.3`, the fixed generator), 3,000 steps of 8 at peak lr
# 1.5e-4, the last 300 QAT, the full-list browser batches packed: phase 61 moved the blind browser
# set 13 -> 15 of 24 and upstream's 192 153 -> 157, so the recipe continues. Started at the end of
# session 26; resumes from out/run62/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase62.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 62 3000 "$@"
