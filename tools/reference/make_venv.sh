#!/usr/bin/env bash
# Creates the pinned reference venvs next to this script when they are missing:
#   tools/reference/.venv-v3 from requirements-v3.txt
#   tools/reference/.venv-v2 from requirements-v2.txt (when that file exists)
# Usage: tools/reference/make_venv.sh [v3|v2 ...]   (default: every generation with a requirements file)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
gens=("$@")
if [ ${#gens[@]} -eq 0 ]; then
  for req in "$here"/requirements-v*.txt; do
    [ -e "$req" ] || continue
    g="${req##*/requirements-}"; gens+=("${g%.txt}")
  done
fi
for g in "${gens[@]}"; do
  req="$here/requirements-$g.txt"
  venv="$here/.venv-$g"
  [ -f "$req" ] || { echo "no $req" >&2; exit 1; }
  # The venv records the requirements it was built from; changed pins rebuild it.
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/requirements.txt"; then
    echo "$venv is up to date"
    continue
  fi
  echo "creating $venv from $req"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -r "$req"
  cp "$req" "$venv/requirements.txt"
done
