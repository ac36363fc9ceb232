#!/usr/bin/env bash
# Phase 69 (issue 49; LOG.md, session 30): phase 68's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 69), 1,800 steps so that it ends within the session, the last 300 QAT, packed.
# Starts from out/run68/params.pkl, or where out/ is gone from lineage/phase68.cact (in git at
# 6c87a52); resumes from out/run69/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase69.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 69 1800 "$@"
