"""Reference sentence embeddings of a Hugging Face BERT bi-encoder folder, for the Node parity tests.

    python/.venv/bin/python python/reference_embed.py \
        --model models/.cache/hf/all-MiniLM-L6-v2 --input texts.jsonl --out test/fixtures/x/minilm

Input (--input): JSONL, one text per line, either {"id": "...", "text": "..."} (id optional: the
0-based line number as a string when absent) or a bare JSON string. --ids a,b,c (or --ids-file,
one id per line) selects and orders a subset. --text "..." (repeatable) instead of --input for a
quick look.

Output, two files (PREFIX from --out):
  PREFIX.f32   count x dims float32, little-endian, row-major, no header: row i is the embedding
               of the i-th selected text. Node: new Float32Array(buf.buffer, buf.byteOffset,
               count * dims) (on a little-endian host), or buf.readFloatLE(4 * (i * dims + j)).
  PREFIX.json  sidecar: {"format": "f32le-rows/v1", "file": "<PREFIX basename>.f32", "dtype":
               "float32", "byte_order": "little", "count", "dims", "normalized": true, "pooling",
               "max_seq_length", "model": {name, hf_id, package, version, weights_sha256},
               "backend", "versions", "ids": [...], "token_ids": [[...]] (unless --no-token-ids),
               "f32_sha256"}.

Embeddings are what sentence-transformers' encode(texts, normalize_embeddings=True) gives for the
folder: the text is stripped (and lowercased when sentence_bert_config.json says do_lower_case), the
folder's tokenizer.json encodes it with [CLS]/[SEP], truncated to max_seq_length (the tokenizer.json's
own truncation/padding settings are overridden, as sentence-transformers does), the BERT encoder
runs, the folder's Pooling module (1_Pooling/config.json: cls, mean, max or mean_sqrt_len) pools,
and the vector is L2-normalized.

Backends:
  numpy (default)   an independent NumPy implementation of the BERT encoder reading
                    model.safetensors, computed in float64 and rounded to float32 at the end; no
                    torch. Each text runs unpadded (no batch padding effects).
  sentence-transformers
                    SentenceTransformer(folder).encode(..., normalize_embeddings=True), float32 on
                    CPU; needs `bash python/setup-venv.sh --with-sentence-transformers`.
--check runs both and exits 1 when any component differs by more than --tolerance (default 1e-5).

Python tooling only; never on the npm package's runtime path. No network access (HF_HUB_OFFLINE).
"""

from __future__ import annotations

import os

# Offline, and gentle on a machine that also runs latency benchmarks: one BLAS thread.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

FORMAT = "f32le-rows/v1"


# --------------------------------------------------------------------------------------------
# Folder description (sentence-transformers layout)


class Folder:
    def __init__(self, path: Path):
        self.path = path
        self.config = self._json("config.json")
        if self.config is None:
            raise SystemExit(f"{path}: no config.json (not a Hugging Face model folder)")
        self.st_config = self._json("sentence_bert_config.json") or {}
        self.tok_config = self._json("tokenizer_config.json") or {}
        self.provenance = self._json("PROVENANCE.json")
        modules = self._json("modules.json") or []
        self.normalize = any(m.get("type", "").endswith("Normalize") for m in modules)
        unsupported = [m["type"] for m in modules
                       if not m.get("type", "").endswith(("Transformer", "Pooling", "Normalize"))]
        if unsupported:
            raise SystemExit(f"{path}: modules not supported by the NumPy backend: {unsupported}")
        pooling = {}
        for m in modules:
            if m.get("type", "").endswith("Pooling"):
                pooling = self._json(f"{m.get('path', '')}/config.json") or {}
        modes = [k[len("pooling_mode_"):] for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True]
        if not modules:
            modes = ["mean_tokens"]  # sentence-transformers' default for a plain transformers folder
        if len(modes) != 1:
            raise SystemExit(f"{path}: expected exactly one pooling mode, got {modes}")
        self.pooling = modes[0]
        self.do_lower_case = bool(self.st_config.get("do_lower_case", False))
        msl = self.st_config.get("max_seq_length")
        if msl is None:
            msl = min(self.config.get("max_position_embeddings", 512), self.tok_config.get("model_max_length", 512))
        self.max_seq_length = int(msl)

    def _json(self, name: str):
        p = self.path / name
        return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None

    def model_info(self) -> dict:
        prov = self.provenance or {}
        weights = self.path / "model.safetensors"
        files = prov.get("files") or {}
        sha = (files.get("model.safetensors") or {}).get("sha256")
        if sha is None and weights.is_file():
            sha = hashlib.sha256(weights.read_bytes()).hexdigest()
        return {
            "name": prov.get("name", self.path.name),
            "hf_id": prov.get("hf_id"),
            "package": (prov.get("package") or {}).get("name"),
            "version": (prov.get("package") or {}).get("version"),
            "weights_sha256": sha,
        }

    def tokenizer(self):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        # sentence-transformers calls the tokenizer with padding=True, truncation="longest_first",
        # max_length=max_seq_length, which overrides what tokenizer.json itself carries.
        tok.no_padding()
        tok.enable_truncation(max_length=self.max_seq_length)
        return tok

    def preprocess(self, text: str) -> str:
        text = text.strip()
        return text.lower() if self.do_lower_case else text


# --------------------------------------------------------------------------------------------
# NumPy BERT (float64)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float64 to ~1e-13: Maclaurin series for |x| < 3, continued fraction of erfc beyond."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    out = np.empty_like(x)
    small = ax < 3.0
    if small.any():
        xs = x[small]
        x2 = xs * xs
        term = xs.copy()
        total = xs.copy()
        for n in range(1, 80):
            term = term * (-x2) / n
            total = total + term / (2 * n + 1)
        out[small] = total * (2.0 / math.sqrt(math.pi))
    big = ~small
    if big.any():
        xb = ax[big]
        f = np.zeros_like(xb)
        for k in range(80, 0, -1):
            f = (k / 2.0) / (xb + f)
        erfc = np.exp(-xb * xb) / (math.sqrt(math.pi) * (xb + f))
        out[big] = np.sign(x[big]) * (1.0 - erfc)
    return out


ACTIVATIONS = {
    "gelu": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "gelu_new": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_pytorch_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "relu": lambda x: np.maximum(x, 0.0),
}


class NumpyBert:
    def __init__(self, folder: Folder):
        from safetensors.numpy import load_file

        cfg = folder.config
        if cfg.get("model_type") != "bert":
            raise SystemExit(f"NumPy backend: model_type {cfg.get('model_type')!r} is not supported (bert only)")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise SystemExit("NumPy backend: only absolute position embeddings are supported")
        act = cfg.get("hidden_act", "gelu")
        if act not in ACTIVATIONS:
            raise SystemExit(f"NumPy backend: hidden_act {act!r} is not supported")
        self.act = ACTIVATIONS[act]
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.hidden = int(cfg["hidden_size"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        raw = load_file(str(folder.path / "model.safetensors"))
        prefix = next((p for p in ("", "bert.", "model.") if f"{p}embeddings.word_embeddings.weight" in raw), None)
        if prefix is None:
            raise SystemExit("NumPy backend: no embeddings.word_embeddings.weight in model.safetensors")
        self.w = {k[len(prefix):]: v.astype(np.float64) for k, v in raw.items()
                  if k.startswith(prefix) and v.dtype.kind == "f"}

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def hidden_states(self, ids: list[int]) -> np.ndarray:
        """Last hidden state (L, hidden) of one unpadded sequence (token_type_ids all 0)."""
        w, n = self.w, len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
        x = self._ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        dh = self.hidden // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, self.heads, dh).transpose(1, 0, 2)

            q = split(self._dense(x, f"{p}.attention.self.query"))
            k = split(self._dense(x, f"{p}.attention.self.key"))
            v = split(self._dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            probs = scores / scores.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(1, 0, 2).reshape(n, self.hidden)
            x = self._ln(self._dense(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            inter = self.act(self._dense(x, f"{p}.intermediate.dense"))
            x = self._ln(self._dense(inter, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x


def pool(h: np.ndarray, mode: str) -> np.ndarray:
    if mode == "cls_token":
        return h[0]
    if mode == "mean_tokens":
        return h.mean(0)
    if mode == "max_tokens":
        return h.max(0)
    if mode == "mean_sqrt_len_tokens":
        return h.sum(0) / math.sqrt(h.shape[0])
    raise SystemExit(f"pooling mode {mode!r} is not supported by the NumPy backend")


def embed_numpy(folder: Folder, token_ids: list[list[int]]) -> np.ndarray:
    bert = NumpyBert(folder)
    rows = []
    for ids in token_ids:
        v = pool(bert.hidden_states(ids), folder.pooling)
        if folder.normalize:
            v = v / max(float(np.linalg.norm(v)), 1e-12)
        rows.append(v)
    return np.asarray(rows, dtype=np.float64).astype(np.float32)


def embed_st(folder: Folder, texts: list[str]) -> np.ndarray:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise SystemExit("sentence-transformers is not installed: "
                         "bash python/setup-venv.sh --with-sentence-transformers") from e
    model = SentenceTransformer(str(folder.path), device="cpu", local_files_only=True)
    out = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, batch_size=32,
                       show_progress_bar=False)
    return np.asarray(out, dtype=np.float32)


# --------------------------------------------------------------------------------------------
# CLI


def read_inputs(args) -> tuple[list[str], list[str]]:
    if args.text:
        return [str(i) for i in range(len(args.text))], list(args.text)
    ids, texts = [], []
    with open(args.input, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if not line.strip():
                continue
            item = json.loads(line)
            if isinstance(item, str):
                ids.append(str(n))
                texts.append(item)
            else:
                ids.append(str(item.get("id", n)))
                texts.append(item["text"])
    wanted = None
    if args.ids:
        wanted = [s for s in args.ids.split(",") if s]
    elif args.ids_file:
        wanted = [s.strip() for s in Path(args.ids_file).read_text(encoding="utf-8").splitlines() if s.strip()]
    if wanted is not None:
        index = {i: t for i, t in zip(ids, texts)}
        missing = [i for i in wanted if i not in index]
        if missing:
            raise SystemExit(f"ids not in {args.input}: {missing[:10]}")
        ids, texts = wanted, [index[i] for i in wanted]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate ids in the input")
    return ids, texts


def versions(backend: str) -> dict:
    import importlib.metadata as md

    names = ["numpy", "safetensors", "tokenizers"]
    if backend != "numpy":
        names += ["sentence-transformers", "transformers", "torch"]
    out = {"python": sys.version.split()[0]}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            out[n] = None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description="Reference embeddings (see the module docstring for the format).")
    ap.add_argument("--model", required=True, type=Path, help="Hugging Face model folder")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", help="JSONL of texts")
    src.add_argument("--text", action="append", help="a text (repeatable), instead of --input")
    sel = ap.add_mutually_exclusive_group()
    sel.add_argument("--ids", help="comma-separated ids to embed, in this order")
    sel.add_argument("--ids-file", help="file with one id per line")
    ap.add_argument("--out", help="output prefix: writes PREFIX.f32 and PREFIX.json")
    ap.add_argument("--backend", choices=["numpy", "sentence-transformers"], default="numpy")
    ap.add_argument("--check", action="store_true",
                    help="also run the other backend and fail beyond --tolerance (needs sentence-transformers)")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--no-token-ids", action="store_true", help="leave token_ids out of the sidecar")
    args = ap.parse_args()
    if not args.out and not args.check:
        ap.error("--out is required unless --check")

    folder = Folder(args.model.resolve())
    ids, texts = read_inputs(args)
    if not texts:
        raise SystemExit("no texts")
    tok = folder.tokenizer()
    token_ids = [e.ids for e in tok.encode_batch([folder.preprocess(t) for t in texts], add_special_tokens=True)]

    if args.backend == "numpy":
        emb = embed_numpy(folder, token_ids)
    else:
        emb = embed_st(folder, texts)

    if args.check:
        other = embed_st(folder, texts) if args.backend == "numpy" else embed_numpy(folder, token_ids)
        diff = np.abs(emb.astype(np.float64) - other.astype(np.float64))
        cos = (emb.astype(np.float64) * other.astype(np.float64)).sum(1)
        worst = int(diff.max(1).argmax())
        print(json.dumps({"count": len(texts), "dims": int(emb.shape[1]), "max_abs_diff": float(diff.max()),
                          "mean_abs_diff": float(diff.mean()), "min_cosine": float(cos.min()),
                          "worst_id": ids[worst], "tolerance": args.tolerance}), file=sys.stderr)
        if diff.max() > args.tolerance:
            print("reference_embed.py: backends disagree beyond the tolerance", file=sys.stderr)
            return 1

    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        data = emb.astype("<f4", copy=False).tobytes(order="C")
        out.with_name(out.name + ".f32").write_bytes(data)
        sidecar = {
            "format": FORMAT,
            "file": out.name + ".f32",
            "dtype": "float32",
            "byte_order": "little",
            "count": int(emb.shape[0]),
            "dims": int(emb.shape[1]),
            "normalized": folder.normalize,
            "pooling": folder.pooling,
            "max_seq_length": folder.max_seq_length,
            "do_lower_case": folder.do_lower_case,
            "model": folder.model_info(),
            "backend": "numpy-float64" if args.backend == "numpy" else "sentence-transformers",
            "versions": versions(args.backend),
            "f32_sha256": hashlib.sha256(data).hexdigest(),
            "ids": ids,
        }
        if not args.no_token_ids:
            sidecar["token_ids"] = token_ids
        out.with_name(out.name + ".json").write_text(json.dumps(sidecar, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}.f32 ({emb.shape[0]} x {emb.shape[1]} float32) and {out}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
