#!/usr/bin/env bash
# Trains the shipped cross-encoder (models/cross-encoder-minilm-l6, its MODEL_CARD.md says what it
# is) from the judged collections and the all-MiniLM-L6-v2 weights that
# scripts/fetch-reference-models.sh caches, on the CPU, deterministically: the same inputs give
# the same model_int8.onnx (sha256 in PROVENANCE.json).
#
#   bash scripts/train-shipped-cross-encoder.sh [--loco] [--points]
#
#   --loco    also print the leave-one-collection-out figures of the recipe (every fold)
#   --points  also fit the operating points on the five collections (about 20 minutes)
#
# Environment: DATA (default ../shared/data), WORK (default models/.cache/training/interaction: the
# BM25 lists, the encoder's token states, 2 GB, reused while present), OUT (default the shipped
# folder), TRAIN_ON (default cisi,cranfield,med: the collections without stated use restrictions).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$root/../shared/data}
work=${WORK:-$root/models/.cache/training/interaction}
out=${OUT:-$root/models/cross-encoder-minilm-l6}
train_on=${TRAIN_ON:-cisi,cranfield,med}
hf=$root/models/.cache/hf/all-MiniLM-L6-v2
py=$root/python/.venv/bin/python
loco=0 points=0
for arg in "$@"; do
  case $arg in
    --loco) loco=1 ;;
    --points) points=1 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
[ -f "$hf/model.safetensors" ] || { echo "missing $hf: run scripts/fetch-reference-models.sh" >&2; exit 1; }
"$py" -c 'import torch, transformers, onnx' 2>/dev/null ||
  { echo "needs torch, transformers, onnx: bash python/setup-venv.sh --with-sentence-transformers --with-peers" >&2; exit 1; }
mkdir -p "$work" "$out/onnx"
cd "$root"

collections=(cisi cranfield med nfcorpus scifact)
for c in "${collections[@]}"; do
  [ -f "$work/$c.jsonl" ] || npx tsx scripts/cross-encoder-lists.ts "$data/$c" "$work/$c.jsonl" 100
done
[ -f "$work/scifact-train.jsonl" ] || npx tsx scripts/cross-encoder-lists.ts "$data/scifact" "$work/scifact-train.jsonl" 100 train
if [ ! -f "$work/seg.npz" ]; then
  rm -f "$work"/raw-*.pkl
  "$py" python/interaction/encode_segments.py "$hf" "$work/seg" "$work"/{cisi,cranfield,med,nfcorpus,scifact,scifact-train}.jsonl
fi
if [ $loco = 1 ]; then
  "$py" python/interaction/train.py "$work/seg" "$work" "$data" --head linear
  "$py" python/interaction/train.py "$work/seg" "$work" "$data" --head linear --train-on "$train_on"
fi
"$py" python/interaction/train.py "$work/seg" "$work" "$data" --head linear --train-on "$train_on" --final --save "$work/head"
"$py" python/interaction/export.py "$work/head-all.pt" "$hf" "$work/model.onnx"
npx tsx scripts/quantize-onnx.ts "$work/model.onnx" "$out/onnx/model_int8.onnx"
cp "$hf"/{tokenizer.json,config.json,special_tokens_map.json} "$out/"
"$py" - "$hf" "$out" "$train_on" <<'PY'
import hashlib, json, sys
hf, out, train_on = sys.argv[1:]
cfg = json.load(open(f"{hf}/tokenizer_config.json"))
cfg["model_max_length"] = 256  # the window the head was trained on
json.dump(cfg, open(f"{out}/tokenizer_config.json", "w"), indent=2)
src = json.load(open(f"{hf}/PROVENANCE.json"))
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
files = ["onnx/model_int8.onnx", "tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"]
json.dump(
    {
        "format": "relevance-gate-provenance/v1",
        "model": "segment-local interaction cross-encoder over all-MiniLM-L6-v2 (MODEL_CARD.md)",
        "trained_by": "relevance-gate scripts/train-shipped-cross-encoder.sh (CPU)",
        "training_collections": train_on.split(","),
        "base": {
            "name": src["name"],
            "hf_id": src["hf_id"],
            "package": src["package"],
            "license": src["model_license"],
            "weights_sha256": sha(f"{hf}/model.safetensors"),
        },
        "files": {f: {"sha256": sha(f"{out}/{f}")} for f in files},
    },
    open(f"{out}/PROVENANCE.json", "w"),
    indent=2,
)
PY
sha256sum "$out/onnx/model_int8.onnx"
if [ $points = 1 ]; then
  node dist/cli/main.js fit-points --tier cross-encoder --model "$out" --no-progress \
    $(for c in "${collections[@]}"; do printf -- '--collection %s ' "$data/$c"; done) \
    --out "$out/operating-points.json" --json "$work/fit.json"
fi
