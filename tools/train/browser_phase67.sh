#!/usr/bin/env bash
# Phase 67 (issue 49; LOG.md, session 29): phase 66's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 67), 2,000 steps so that it ends within the session, the last 300 QAT, packed.
# Starts from out/run66/params.pkl, or where out/ is gone from lineage/phase66.cact (in git at
# e08e03d); resumes from out/run67/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase67.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 67 2000 "$@"
