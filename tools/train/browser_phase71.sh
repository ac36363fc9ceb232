#!/usr/bin/env bash
# Phase 71 (issue 49; LOG.md, session 31): phase 70's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 71), 1,200 steps so that it ends within the session, the last 300 QAT, packed.
# Starts from out/run70/params.pkl, or where out/ is gone from lineage/phase70.cact (in git at
# 20f3857); resumes from out/run71/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase71.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 71 1200 "$@"
