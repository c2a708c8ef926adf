#!/usr/bin/env bash
# Trains the cross-encoder on the judged collections, imports it as an engine model folder and
# measures it on a held-out collection (leave-one-collection-out), or on none (the shipped model).
#
#   bash scripts/train-cross-encoder.sh --heldout scifact [--name loco-scifact] [trainer args…]
#   bash scripts/train-cross-encoder.sh --heldout none --name all [trainer args…]
#
# Pairs: scripts/cross-encoder-pairs.ts (4 relevant, 3 BM25 hard and 2 random negatives per query,
# seed 1); trainer: python/train_cross_encoder.py (needs `bash python/setup-venv.sh
# --with-sentence-transformers`); import: `relevance-gate import-model --as cross-encoder`;
# measure: `relevance-gate eval --tier cross-encoder --variant int8` (BM25 top 100, nDCG@10).
# Everything lands under models/.cache/training/<name>/ (git-ignored); a rerun resumes training
# from its checkpoint and skips finished steps.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${DATA:-../shared/data}
COLLECTIONS=(cisi cranfield med nfcorpus scifact)
HELDOUT=
NAME=
TRAIN_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --heldout) HELDOUT=$2; shift 2 ;;
    --name) NAME=$2; shift 2 ;;
    *) TRAIN_ARGS+=("$1"); shift ;;
  esac
done
[ -n "$HELDOUT" ] || { echo "--heldout <collection|none> is required" >&2; exit 2; }
NAME=${NAME:-loco-$HELDOUT}
ROOT=models/.cache/training
OUT=$ROOT/$NAME
PY=python/.venv/bin/python
mkdir -p "$OUT"

PAIRS=()
for c in "${COLLECTIONS[@]}"; do
  [ "$c" = "$HELDOUT" ] && continue
  file=$ROOT/pairs-$c.jsonl
  [ -s "$file" ] || npx tsx scripts/cross-encoder-pairs.ts --data "$DATA" --collections "$c" --out "$file"
  PAIRS+=(--pairs "$file")
done

$PY python/train_cross_encoder.py "${PAIRS[@]}" --base models/.cache/hf/all-MiniLM-L6-v2 --out "$OUT/hf" \
  "${TRAIN_ARGS[@]}" 2>&1 | grep --line-buffered -v -e '^Writing model shards' -e 'UserWarning' >&2
node dist/cli/main.js import-model "$OUT/hf" --as cross-encoder --out "$OUT/model" >&2

if [ "$HELDOUT" != none ]; then
  node dist/cli/main.js eval --collection "$DATA/$HELDOUT" --tier cross-encoder --model "$OUT/model" \
    --variant int8 --no-progress --json "$OUT/eval-$HELDOUT.json" >&2
fi
