"""Reference cross-encoder logits of a BERT checkpoint with a sequence-classification head, for the
Node parity tests (the forward pass of transformers' BertForSequenceClassification, in float64).

    python/.venv/bin/python python/reference_cross.py --model models/.cache/hf/all-MiniLM-L6-v2 \
        --head models/.cache/all-minilm-l6-v2-cross/head.safetensors --input pairs.jsonl \
        --max-length 256 --out models/.cache/reference/all-minilm-l6-v2-cross

Input (--input): JSONL, one pair a line: {"id": "...", "query": "...", "passage": "..."}.

Each pair is tokenized as sentence-transformers' CrossEncoder does: both texts stripped, then the
folder's tokenizer.json encodes (query, passage) with [CLS] q [SEP] p [SEP], token types 0 / 1,
truncation longest_first to --max-length tokens, no padding (tokenizer.json's own
truncation/padding settings overridden). The encoder is reference_embed.py's NumPy BERT (float64,
each pair unpadded), then the head: pooler tanh(W_p h[CLS] + b_p), classifier W_c pooled + b_c.
The head's tensors (pooler.dense.*, classifier.*, Hugging Face names, [out, in]) come from the
checkpoint, overridden by --head: a safetensors file such as the seeded head `relevance-gate
import-model --as cross-encoder` writes for a checkpoint that has none.

Output (f32le-rows/v1, as reference_embed.py): PREFIX.f32 count x labels little-endian float32
logits, row-major; PREFIX.json sidecar: {"format", "file", "dtype", "byte_order", "count", "dims"
(labels), "kind": "cross-encoder-logits", "max_length", "truncation", "model", "head" {file,
sha256, tensors}, "backend", "versions", "ids", "token_ids", "type_ids", "f32_sha256"}.

Python tooling only; never on the npm package's runtime path. No network access.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402
from reference_embed import Folder, NumpyBert, map_hidden, versions, write_f32_rows  # noqa: E402


def load_head(folder: Folder, prefix: str, head_file: Path | None) -> tuple[dict[str, np.ndarray], dict]:
    """pooler.dense.{weight,bias} and classifier.{weight,bias} in float64, Hugging Face orientation."""
    from safetensors import safe_open

    names = {"pooler.dense.weight": f"{prefix}pooler.dense.weight", "pooler.dense.bias": f"{prefix}pooler.dense.bias",
             "classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"}
    head: dict[str, np.ndarray] = {}
    with safe_open(str(folder.path / "model.safetensors"), framework="np") as f:
        keys = set(f.keys())
        for short, full in names.items():
            if full in keys:
                head[short] = f.get_tensor(full).astype(np.float64)
    info = {"file": None, "sha256": None, "tensors": []}
    if head_file is not None:
        with safe_open(str(head_file), framework="np") as f:
            for key in f.keys():
                short = key[len(prefix):] if prefix and key.startswith(prefix) else key
                if short not in names:
                    raise SystemExit(f"{head_file}: unexpected tensor {key} (expected pooler.dense.* or classifier.*)")
                head[short] = f.get_tensor(key).astype(np.float64)
                info["tensors"].append(key)
        info["file"] = str(head_file)
        info["sha256"] = hashlib.sha256(head_file.read_bytes()).hexdigest()
    missing = [n for n in names if n not in head]
    if missing:
        raise SystemExit(f"no {', '.join(missing)} in the checkpoint or --head")
    return head, info


def checkpoint_prefix(folder: Folder) -> str:
    from safetensors import safe_open

    with safe_open(str(folder.path / "model.safetensors"), framework="np") as f:
        keys = set(f.keys())
    for p in ("", "bert."):
        if f"{p}embeddings.word_embeddings.weight" in keys:
            return p
    raise SystemExit("no embeddings.word_embeddings.weight in model.safetensors")


def main() -> int:
    ap = argparse.ArgumentParser(description="Reference cross-encoder logits (see the module docstring).")
    ap.add_argument("--model", required=True, type=Path, help="Hugging Face model folder (BERT, model.safetensors)")
    ap.add_argument("--head", type=Path, help="safetensors file with pooler.dense.* / classifier.* (overrides the checkpoint's)")
    ap.add_argument("--input", required=True, help="JSONL of {id, query, passage}")
    ap.add_argument("--max-length", type=int, default=512, help="tokens per pair, special tokens included")
    ap.add_argument("--out", required=True, help="output prefix: writes PREFIX.f32 and PREFIX.json")
    ap.add_argument("--jobs", type=int, default=1, help="processes (one BLAS thread each)")
    args = ap.parse_args()

    folder = Folder(args.model.resolve())
    ids, queries, passages = [], [], []
    with open(args.input, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if not line.strip():
                continue
            item = json.loads(line)
            ids.append(str(item.get("id", n)))
            queries.append(folder.preprocess(item["query"]))
            passages.append(folder.preprocess(item["passage"]))
    if not ids:
        raise SystemExit("no pairs")
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate ids in the input")

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder.path / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=args.max_length, strategy="longest_first")
    encodings = tok.encode_batch(list(zip(queries, passages)), add_special_tokens=True)
    token_ids = [e.ids for e in encodings]
    type_ids = [e.type_ids for e in encodings]

    prefix = checkpoint_prefix(folder)
    head, head_info = load_head(folder, prefix, args.head)

    def reduce(h: np.ndarray) -> np.ndarray:
        pooled = np.tanh(head["pooler.dense.weight"] @ h[0] + head["pooler.dense.bias"])
        return head["classifier.weight"] @ pooled + head["classifier.bias"]

    rows = map_hidden(NumpyBert(folder), token_ids, reduce, types=type_ids, jobs=args.jobs)
    logits = np.asarray(rows, dtype=np.float64).astype(np.float32)

    out = Path(args.out)
    write_f32_rows(
        out,
        logits,
        {
            "kind": "cross-encoder-logits",
            "max_length": args.max_length,
            "truncation": "longest_first",
            "model": folder.model_info(),
            "head": head_info,
            "backend": "numpy-float64",
            "versions": versions("numpy"),
        },
        {"ids": ids, "token_ids": token_ids, "type_ids": type_ids},
    )
    print(f"wrote {out}.f32 ({logits.shape[0]} x {logits.shape[1]} float32 logits) and {out}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
