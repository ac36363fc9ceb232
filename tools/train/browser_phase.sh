#!/usr/bin/env bash
# A phase on the browser environment (issue 49; LOG.md, sessions 22-23): phase 43 (shipped until
# session 42) continued on browser.py's environment as a seventh with a replay of the six under
# phase 43's flags; make_model.sh runs the phases of the shipped lineage through it. The defaults
# are phase 54 (40% browser, every prompt with the full tool list, peak lr 3e-4);
# browser_phase55.sh sets phase 55's.
# Resumable: rerun after an interruption; STEPS sets the schedule's length, so a longer run is a
# new WORK_DIR (or a restart early in the run, while the schedule is still near its peak).
# Usage: tools/train/browser_phase.sh [WORK_DIR]   (PYTHON=... as make_model.sh; needs
#        WORK_DIR/data/tokenizer.model, which make_model.sh's first two commands write)
# Env: PHASE (54) names data$PHASE, run$PHASE and phase$PHASE.cact; SEED (54), TRAIN (6000),
#      BROWSER (0.4), SUBSET (0: datagen --browser-subset), STEPS (220), LR (3e-4), WARMUP (10),
#      MID_LEN (0: train.py --mid-len), INIT (train.py --init; WORK_DIR/phase43C.cact, phase 43
#      with its head as make_model.sh writes it), BATCH (16),
#      QAT (STEPS: how many of the last steps run under QAT), TRAIN_FLAGS (more train.py flags),
#      PLAIN (0: datagen --plain, the share of requests left bare; phase 59), TOKENIZER
#      (WORK_DIR/data/tokenizer.model: the SentencePiece model of the data, the run and the
#      container; phase 73's is widened by extend_vocab.py), LAYERS (6: train.py --layers, which
#      deepens a shallower INIT; phase 74), DATAGEN_FLAGS (more datagen.py flags; phase 77).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$here/out}"
PYTHON="${PYTHON:-$root/tools/reference/.venv-v3/bin/python}"
phase="${PHASE:-54}"
steps="${STEPS:-220}"
data="$work/data$phase"
mkdir -p "$data"
tokenizer="${TOKENIZER:-$work/data/tokenizer.model}"
cp "$tokenizer" "$data/tokenizer.model"
# Phase 43's generator flags; a small validation set, since every browser example is ~900 tokens
# (the 12 tools' JSON) and the figure is measured through the runtime instead.
[ -f "$data/train.jsonl" ] || "$PYTHON" "$here/datagen.py" --out "$data" --train "${TRAIN:-6000}" --val 32 \
  --seed "${SEED:-54}" --values mixed --paraphrase 0.5 --env-weights 1,1,1,3,1,3 --parallel-share 0.30 \
  --more-phrasings 3 --wide-words 0.45 --vocab-words 0.4 --wide-verbs --tokenizer "$tokenizer" \
  --near-miss 0.5 --name-miss 0.5 --browser "${BROWSER:-0.4}" --browser-subset "${SUBSET:-0}" \
  --plain "${PLAIN:-0}" ${DATAGEN_FLAGS:-}
# Long prompts need --max-len 1024 (the model's max_seq_len); batches of the short ones stay at 256.
"$PYTHON" "$here/train.py" --data "$data" --work "$work/run$phase" --init "${INIT:-$work/phase43C.cact}" \
  --layers "${LAYERS:-6}" --steps "$steps" --qat-steps "${QAT:-$steps}" --batch "${BATCH:-16}" --warmup "${WARMUP:-10}" --lr "${LR:-3e-4}" --max-len 1024 \
  --short-len 256 --mid-len "${MID_LEN:-0}" --save-every 25 ${TRAIN_FLAGS:-}
"$PYTHON" "$here/export.py" --work "$work/run$phase" --data "$data" --out "$work/phase$phase.cact"
