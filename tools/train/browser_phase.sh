#!/usr/bin/env bash
# Phase 54 (issue 49; LOG.md, session 22): the shipped container continued on the browser
# environment (browser.py) as a seventh, 40% of the examples, with a replay of the six under
# phase 43's flags. Not in the shipped lineage (make_model.sh) yet. Resumable: rerun after an
# interruption; STEPS=N (default 220) sets the schedule's length, so a longer run is a new WORK_DIR.
# Usage: tools/train/browser_phase.sh [WORK_DIR]   (PYTHON=... as make_model.sh; needs
#        WORK_DIR/data/tokenizer.model, which make_model.sh's first two commands write)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$here/out}"
PYTHON="${PYTHON:-$root/tools/reference/.venv-v3/bin/python}"
steps="${STEPS:-220}"
data="$work/data54"
mkdir -p "$data"
cp "$work/data/tokenizer.model" "$data/tokenizer.model"
# Phase 43's generator flags; a small validation set, since every browser example is ~900 tokens
# (the 12 tools' JSON) and the figure is measured through the runtime instead.
[ -f "$data/train.jsonl" ] || "$PYTHON" "$here/datagen.py" --out "$data" --train 6000 --val 32 --seed 54 \
  --values mixed --paraphrase 0.5 --env-weights 1,1,1,3,1,3 --parallel-share 0.30 --more-phrasings 3 \
  --wide-words 0.45 --vocab-words 0.4 --wide-verbs --tokenizer "$work/data/tokenizer.model" \
  --near-miss 0.5 --name-miss 0.5 --browser 0.4
# Long prompts need --max-len 1024 (the model's max_seq_len); batches of the short ones stay at 256.
"$PYTHON" "$here/train.py" --data "$data" --work "$work/run54" --init "$root/www/models/default.cact" \
  --layers 6 --steps "$steps" --qat-steps "$steps" --warmup 10 --lr 3e-4 --max-len 1024 --short-len 256 \
  --save-every 25
"$PYTHON" "$here/export.py" --work "$work/run54" --data "$data" --out "$work/phase54.cact"
