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
                    torch. Each text runs unpadded (no batch padding effects): the token-wise
                    layers run on many texts' tokens stacked, attention per text. GELU's erf is
                    Cody's rational approximation (~1e-16; --check-erf compares it with math.erf).
                    --jobs N splits the texts over N processes (one BLAS thread each).
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


# W. J. Cody's rational Chebyshev approximations of erf / erfc ("Rational Chebyshev approximations
# for the error function", Math. Comp. 23 (1969) 631-638; the coefficients of Netlib SPECFUN
# CALERF), accurate to about 1e-16 relative in float64: |x| <= 0.46875 erf = x P(x^2)/Q(x^2);
# 0.46875 < |x| <= 4 erfc = exp(-x^2) P(x)/Q(x); |x| > 4 the asymptotic form in 1/x^2. Fixed
# cost per element, unlike a power series (which needs ~80 terms near |x| = 3).
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_SQRPI = 5.6418958354775628695e-1  # 1 / sqrt(pi)
_ERF_XBIG = 26.543  # erfc(x) underflows to 0 beyond


def _erfc_scaled_exp(y: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    """exp(-y^2) * ratio, with y^2 split as Cody does so the exponent keeps its precision."""
    ysq = np.trunc(16.0 * y) / 16.0
    delta = (y - ysq) * (y + ysq)
    return np.exp(-ysq * ysq) * np.exp(-delta) * ratio


def blockwise(f, x: np.ndarray, block: int = 1 << 15) -> np.ndarray:
    """f applied elementwise over cache-sized blocks of x: large temporaries cost more in page
    faults than in arithmetic."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, block):
        out[start:start + block] = f(flat[start:start + block])
    return out.reshape(x.shape)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float64 (Cody 1969, see above); `python/reference_embed.py --check-erf` compares it with math.erf."""
    x = np.asarray(x, dtype=np.float64)
    if x.size > (1 << 15):
        return blockwise(erf, x)
    y = np.abs(x)
    out = np.empty_like(x)
    small = y <= 0.46875
    if small.any():
        xs = x[small]
        z = xs * xs
        num = _ERF_A[4] * z
        den = z
        for i in range(3):
            num = (num + _ERF_A[i]) * z
            den = (den + _ERF_B[i]) * z
        out[small] = xs * (num + _ERF_A[3]) / (den + _ERF_B[3])
    mid = ~small & (y <= 4.0)
    if mid.any():
        ym = y[mid]
        num = _ERF_C[8] * ym
        den = ym
        for i in range(7):
            num = (num + _ERF_C[i]) * ym
            den = (den + _ERF_D[i]) * ym
        erfc = _erfc_scaled_exp(ym, (num + _ERF_C[7]) / (den + _ERF_D[7]))
        out[mid] = np.copysign(1.0 - erfc, x[mid])
    big = y > 4.0
    if big.any():
        yb = np.minimum(y[big], _ERF_XBIG)
        z = 1.0 / (yb * yb)
        num = _ERF_P[5] * z
        den = z
        for i in range(4):
            num = (num + _ERF_P[i]) * z
            den = (den + _ERF_Q[i]) * z
        ratio = (_SQRPI - z * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / yb
        erfc = np.where(y[big] >= _ERF_XBIG, 0.0, _erfc_scaled_exp(yb, ratio))
        out[big] = np.copysign(1.0 - erfc, x[big])
    return out


def check_erf() -> float:
    """Largest |erf(x) - math.erf(x)| over a grid of [-30, 30] (dense near 0), for --check-erf."""
    grid = np.concatenate([np.linspace(-30.0, 30.0, 600_001), np.linspace(-5.0, 5.0, 1_000_001),
                           np.geomspace(1e-300, 1.0, 10_001), -np.geomspace(1e-300, 1.0, 10_001)])
    ours = erf(grid)
    exact = np.array([math.erf(v) for v in grid.tolist()])
    return float(np.max(np.abs(ours - exact)))


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

    def hidden_states(self, ids: list[int], type_ids: list[int] | None = None) -> np.ndarray:
        """Last hidden state (L, hidden) of one unpadded sequence (token_type_ids all 0 unless given)."""
        return self.hidden_states_many([ids], None if type_ids is None else [type_ids])[0]

    def hidden_states_many(self, seqs: list[list[int]], type_seqs: list[list[int]] | None = None) -> list[np.ndarray]:
        """Last hidden states of several unpadded sequences. The token-wise parts (embeddings,
        projections, LayerNorm, FFN) run on all their tokens stacked, which is what makes float64
        BLAS fast; attention runs per sequence, so no sequence sees another or any padding."""
        w = self.w
        lengths = [len(ids) for ids in seqs]
        bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        all_ids = np.concatenate([np.asarray(ids, dtype=np.int64) for ids in seqs])
        positions = np.concatenate([np.arange(n) for n in lengths]).astype(np.int64)
        if type_seqs is None:
            types = np.zeros_like(all_ids)
        else:
            types = np.concatenate([np.asarray(t, dtype=np.int64) for t in type_seqs])
            if types.shape != all_ids.shape:
                raise SystemExit("token_type_ids do not match the token ids")
        x = (w["embeddings.word_embeddings.weight"][all_ids] + w["embeddings.position_embeddings.weight"][positions]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = self._ln(x, "embeddings.LayerNorm")
        dh = self.hidden // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = self._dense(x, f"{p}.attention.self.query")
            k = self._dense(x, f"{p}.attention.self.key")
            v = self._dense(x, f"{p}.attention.self.value")
            ctx = np.empty_like(x)
            for s, e in zip(bounds[:-1], bounds[1:]):
                n = int(e - s)

                def split(t: np.ndarray) -> np.ndarray:
                    return t[s:e].reshape(n, self.heads, dh).transpose(1, 0, 2)

                scores = split(q) @ split(k).transpose(0, 2, 1) / math.sqrt(dh)
                scores = np.exp(scores - scores.max(-1, keepdims=True))
                probs = scores / scores.sum(-1, keepdims=True)
                ctx[s:e] = (probs @ split(v)).transpose(1, 0, 2).reshape(n, self.hidden)
            x = self._ln(self._dense(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            inter = blockwise(self.act, self._dense(x, f"{p}.intermediate.dense"))
            x = self._ln(self._dense(inter, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return [x[s:e] for s, e in zip(bounds[:-1], bounds[1:])]


def batches_by_tokens(seqs: list[list[int]], budget: int = 2048):
    """Index ranges [start, end) of consecutive sequences with about `budget` tokens each."""
    start, tokens = 0, 0
    for i, ids in enumerate(seqs):
        if tokens > 0 and tokens + len(ids) > budget:
            yield start, i
            start, tokens = i, 0
        tokens += len(ids)
    if start < len(seqs):
        yield start, len(seqs)


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


_WORK: dict = {}


def _run_range(bounds: tuple[int, int]) -> list[np.ndarray]:
    start, end = bounds
    types = _WORK["types"]
    hidden = _WORK["bert"].hidden_states_many(_WORK["seqs"][start:end], None if types is None else types[start:end])
    return [_WORK["reduce"](h) for h in hidden]


def map_hidden(bert: NumpyBert, seqs: list[list[int]], reduce, types: list[list[int]] | None = None,
               jobs: int = 1) -> list[np.ndarray]:
    """reduce(last hidden state) of every sequence, in order; `jobs` > 1 forks that many processes
    (one BLAS thread each, sharing the weights copy-on-write) over batches of ~2,048 tokens."""
    ranges = list(batches_by_tokens(seqs))
    _WORK.update(bert=bert, seqs=seqs, types=types, reduce=reduce)
    try:
        if jobs <= 1 or len(ranges) < 2:
            results = [_run_range(r) for r in ranges]
        else:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(min(jobs, len(ranges))) as workers:
                results = workers.map(_run_range, ranges, chunksize=1)
    finally:
        _WORK.clear()
    return [v for batch in results for v in batch]


def embed_numpy(folder: Folder, token_ids: list[list[int]], jobs: int = 1) -> np.ndarray:
    def reduce(h: np.ndarray) -> np.ndarray:
        v = pool(h, folder.pooling)
        return v / max(float(np.linalg.norm(v)), 1e-12) if folder.normalize else v

    rows = map_hidden(NumpyBert(folder), token_ids, reduce, jobs=jobs)
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



def write_f32_rows(out: Path, rows: np.ndarray, middle: dict, tail: dict) -> None:
    """Writes OUT.f32 (little-endian float32 rows) and OUT.json, the f32le-rows/v1 sidecar: the
    common fields, then `middle`, the data's sha256, then `tail` (in that order)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = rows.astype("<f4", copy=False).tobytes(order="C")
    out.with_name(out.name + ".f32").write_bytes(data)
    sidecar = {
        "format": FORMAT,
        "file": out.name + ".f32",
        "dtype": "float32",
        "byte_order": "little",
        "count": int(rows.shape[0]),
        "dims": int(rows.shape[1]),
        **middle,
        "f32_sha256": hashlib.sha256(data).hexdigest(),
        **tail,
    }
    out.with_name(out.name + ".json").write_text(json.dumps(sidecar, indent=1) + "\n", encoding="utf-8")

def main() -> int:
    if "--check-erf" in sys.argv[1:]:
        worst = check_erf()
        print(json.dumps({"erf_max_abs_diff_vs_math_erf": worst}))
        return 0 if worst <= 1e-15 else 1
    ap = argparse.ArgumentParser(description="Reference embeddings (see the module docstring for the format).")
    ap.add_argument("--model", required=True, type=Path, help="Hugging Face model folder")
    ap.add_argument("--check-erf", action="store_true", help="compare the float64 erf with math.erf and exit")
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
    ap.add_argument("--jobs", type=int, default=1, help="processes for the numpy backend (one BLAS thread each)")
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
        emb = embed_numpy(folder, token_ids, jobs=args.jobs)
    else:
        emb = embed_st(folder, texts)

    if args.check:
        other = embed_st(folder, texts) if args.backend == "numpy" else embed_numpy(folder, token_ids, jobs=args.jobs)
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
        write_f32_rows(
            out,
            emb,
            {
                "normalized": folder.normalize,
                "pooling": folder.pooling,
                "max_seq_length": folder.max_seq_length,
                "do_lower_case": folder.do_lower_case,
                "model": folder.model_info(),
                "backend": "numpy-float64" if args.backend == "numpy" else "sentence-transformers",
                "versions": versions(args.backend),
            },
            {"ids": ids} if args.no_token_ids else {"ids": ids, "token_ids": token_ids},
        )
        print(f"wrote {out}.f32 ({emb.shape[0]} x {emb.shape[1]} float32) and {out}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
