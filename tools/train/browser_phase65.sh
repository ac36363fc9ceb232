#!/usr/bin/env bash
# Phase 65 (issue 49; LOG.md, session 28): the weights of phases 54-63 were lost with the machine
# that held out/, so the lineage restarts from the shipped container on phase 61's recipe (the
# fixed generator, `--plain 0.3`, packed), which the lost lineage reached only at its eighth phase,
# at phase 56's peak lr 3e-4 since it starts as far from the browser as phase 56 did: 3,500 steps
# of 8, the last 300 QAT. It starts from phase 43 with its confidence head (make_model.sh writes
# WORK_DIR/phase43C.cact; the recorded phase 65 started from the container shipped until session
# 42, `git show 0e8cece:www/models/default.cact`). Resumes from out/run65/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase65.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$here/out}"
INIT="${INIT:-$work/phase43C.cact}" LR="${LR:-3e-4}" exec "$here/browser_continue.sh" 65 3500 "$@"
