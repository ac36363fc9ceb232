#!/usr/bin/env bash
# Phase 63 (issue 49; LOG.md, session 27): phase 62's weights (fresh optimiser) on 32,000 new
# examples of the same recipe (seed 63, `--plain 0.3`), 2,000 steps of 8 at peak lr 1.5e-4, the
# last 300 QAT, packed: the generator's own browser requests were still only 109/160 right after
# phase 61, so the model is short of training on its distribution, not of phrasings.
# Resumes from out/run63/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase63.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 63 2000 "$@"
