#!/usr/bin/env bash
# Phase 73 (issue 49; LOG.md, session 32): phase 72's run with one change, the tokenizer widened
# by 256 pieces learned from the browser's requests (extend_vocab.py on phase 72's data: "▁tab",
# "▁unpin", "▁incognito"; each new embedding row starts as its old pieces' mean). Same start
# (phase 71's weights), the same examples (data72's, copied), steps and recipe, so the two
# phases compare the tokenizers.
# Starts from out/run71/params.pkl, or where out/ is gone from lineage/phase71.cact (in git at
# 16475ac; data72 then comes from `browser_continue.sh 72 3000`); resumes from
# out/run73/checkpoint.pkl when rerun.
# Usage: tools/train/browser_phase73.sh [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-$here/out}"
tokenizer="$work/data/tokenizer-browser.model"
[ -f "$tokenizer" ] || "${PYTHON:-$here/../reference/.venv-v3/bin/python}" "$here/extend_vocab.py" \
  --tokenizer "$work/data/tokenizer.model" --data "$work/data72" --merges 256 --out "$tokenizer"
mkdir -p "$work/data73"
[ -f "$work/data73/train.jsonl" ] || cp "$work/data72/train.jsonl" "$work/data72/val.jsonl" "$work/data73/"
FROM=71 TOKENIZER="$tokenizer" exec "$here/browser_continue.sh" 73 3000 "$@"
