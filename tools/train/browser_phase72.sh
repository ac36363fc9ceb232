#!/usr/bin/env bash
# Phase 72 (issue 49; LOG.md, session 31): phase 71's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 72), 3,000 steps, the last 300 QAT, packed.
# Starts from out/run71/params.pkl, or where out/ is gone from lineage/phase71.cact; resumes
# from out/run72/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase72.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 72 3000 "$@"
