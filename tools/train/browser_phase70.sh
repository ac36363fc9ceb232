#!/usr/bin/env bash
# Phase 70 (issue 49; LOG.md, session 30): phase 69's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 70), 3,000 steps, the last 300 QAT, packed.
# Starts from out/run69/params.pkl, or where out/ is gone from lineage/phase69.cact (in git at
# 368f00d); resumes from out/run70/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase70.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 70 3000 "$@"
