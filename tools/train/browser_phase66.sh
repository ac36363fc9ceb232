#!/usr/bin/env bash
# Phase 66 (issue 49; LOG.md, session 28): phase 65's weights on phase 61's recipe at its own peak
# lr 1.5e-4 (seed 66), 3,000 steps, the last 300 QAT, packed: the rebuilt lineage continues. Starts
# from out/run65/params.pkl, or where out/ is gone from lineage/phase65.cact (no longer the head:
# `git checkout 7c62dbf -- tools/train/lineage/phase65.cact` puts it back); resumes from
# out/run66/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase66.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/browser_continue.sh" 66 3000 "$@"
