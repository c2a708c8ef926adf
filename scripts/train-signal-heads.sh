#!/usr/bin/env bash
# Builds the signals variant of the shipped cross-encoder: the same encoder and relevance head
# (models/cross-encoder-minilm-l6) plus an `evidence` head trained on SciFact's evidence labels
# (python/interaction/signal_heads.py, which also trains and measures a `contradicts_premise` head
# and leaves it out: it does not separate CONTRADICT from SUPPORT held out), as one int8 graph
# whose logits are [relevant, evidence]; the shipped operating points carried over
# (scripts/carry-operating-points.ts checks the relevant logits are the same); then the routing on
# SciFact's held-out claims (scripts/route-scifact-evidence.ts).
#
#   bash scripts/train-signal-heads.sh
#
# SciFact is CC BY-NC 2.0, so the folder is built locally (default
# models/.cache/cross-encoder-minilm-l6-signals, git-ignored), never shipped. Needs the work
# folder of scripts/train-shipped-cross-encoder.sh (its lists, token states and head-all.pt).
# Environment: DATA, WORK (as that script), OUT (the variant folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$root/../shared/data}
work=${WORK:-$root/models/.cache/training/interaction}
out=${OUT:-$root/models/.cache/cross-encoder-minilm-l6-signals}
shipped=$root/models/cross-encoder-minilm-l6
hf=$root/models/.cache/hf/all-MiniLM-L6-v2
py=$root/python/.venv/bin/python
[ -f "$work/head-all.pt" ] || { echo "missing $work/head-all.pt: run scripts/train-shipped-cross-encoder.sh first" >&2; exit 1; }
mkdir -p "$out/onnx"
cd "$root"

"$py" python/interaction/signal_heads.py "$work/seg" "$work" "$data" "$work/head-all.pt" --save "$work/signal-heads.pt"
"$py" python/interaction/export.py "$work/head-all.pt" "$hf" "$work/model-signals.onnx" "$work/scifact.jsonl" --signals "$work/signal-heads.pt"
npx tsx scripts/quantize-onnx.ts "$work/model-signals.onnx" "$out/onnx/model_int8.onnx"
cp "$shipped"/{tokenizer.json,tokenizer_config.json,special_tokens_map.json} "$out/"
"$py" - "$shipped" "$out" "$data" "$work/signal-heads.pt" <<'PY'
import hashlib, json, sys
shipped, out, data = sys.argv[1:4]
labels = ["relevant", *__import__("torch").load(sys.argv[4], weights_only=False)["order"]]
cfg = json.load(open(f"{shipped}/config.json"))
cfg |= {
    "id2label": {str(i): name for i, name in enumerate(labels)},
    "label2id": {name: i for i, name in enumerate(labels)},
    "problem_type": "multi_label_classification",
}
json.dump(cfg, open(f"{out}/config.json", "w"), indent=2)
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
prov = json.load(open(f"{shipped}/PROVENANCE.json"))
prov["model"] = "the shipped cross-encoder plus signal heads (scripts/train-signal-heads.sh): " + ", ".join(labels)
prov["trained_by"] = "relevance-gate scripts/train-signal-heads.sh (CPU)"
prov["signal_heads"] = {
    "training_data": "SciFact evidence_labels.tsv, train split (../shared/data/scifact/SOURCE.md)",
    "terms": "CC BY-NC 2.0: the heads inherit SciFact's non-commercial terms",
}
files = ["onnx/model_int8.onnx", "tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"]
prov["files"] = {f: {"sha256": sha(f"{out}/{f}")} for f in files}
json.dump(prov, open(f"{out}/PROVENANCE.json", "w"), indent=2)
PY
npx tsx scripts/carry-operating-points.ts "$shipped" "$out" "$work/scifact.jsonl"
echo "signals model: $out"
npx tsx scripts/route-scifact-evidence.ts "$out" "$data/scifact" 20
