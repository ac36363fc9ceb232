#!/usr/bin/env bash
# Phase 68 (issue 49; LOG.md, session 29): phase 67's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 68), 3,000 steps, the last 300 QAT, packed: the rebuilt lineage continues.
# Starts from out/run67/params.pkl, or where out/ is gone from lineage/phase67.cact (in git at
# 023d5c9); resumes from out/run68/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase68.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 68 3000 "$@"
