#!/usr/bin/env python3
"""Cross-encoder peers for bench/cross-encoder.ts --peers (tooling only; python/requirements-peers.txt
on top of the sentence-transformers set).

    python/.venv/bin/python python/bench_cross_encoder_peers.py make DIR
    python/.venv/bin/python python/bench_cross_encoder_peers.py serve --requests R.json --model NAME \
        --hf HF_DIR --onnx-dir ONNX_DIR --flashrank-root DIR/flashrank --max-length 512 --threads 2

`make DIR` writes, from local folders only (no model hub):
  DIR/minilm-cross/hf/     a transformers BertForSequenceClassification checkpoint of the real
                           MiniLM-L6 cross-encoder folder (models/.cache/all-minilm-l6-v2-cross):
                           the all-MiniLM-L6-v2 encoder and pooler (models/.cache/hf/all-MiniLM-L6-v2)
                           under `bert.`, the folder's seeded head.safetensors as `classifier`; the
                           folder's tokenizer files. The ONNX graph of that folder is an export of
                           exactly these weights, so sentence-transformers runs what the others run.
  DIR/flashrank/<name>/    FlashRank's cache layout for each bench model (<name>.onnx and
                           <name>-int8.onnx as symlinks to the model folder's ONNX files,
                           config.json, tokenizer.json, tokenizer_config.json,
                           special_tokens_map.json, vocab.txt), so flashrank.Ranker finds the
                           model "already downloaded" and never fetches anything; see flashrank_ranker().
  DIR/<name>/model-fused.onnx  the fp32 graph through onnxruntime.transformers.optimizer
                           (model_type bert: the offline fusions SkipLayerNormalization, BiasGelu,
                           Attention where its pattern matches), for the single-request study
  DIR/meta.json            what was written, with sha256s and the fused operator counts.

`make-tiny DIR` writes DIR/tinybert-l2/hf: a transformers BertForSequenceClassification at the
shape of ms-marco-TinyBERT-L-2-v2 (2 layers, hidden 128, 2 heads, FFN 512, one logit) with seeded
random weights (torch.manual_seed(42)) and the MiniLM-L6 tokenizer files (the same uncased BERT
vocabulary): a SPEED/SHAPE model for the server comparison at a size where a k = 20 request fits a
100 ms budget on 2 cores (its scores mean nothing). `relevance-gate import-model DIR/tinybert-l2/hf
--as cross-encoder --out DIR/tinybert-l2/model` builds the ONNX folder the tier loads.

`serve` loads the engines of one model once and answers JSON commands, one per stdin line, with
one JSON line on stdout (so the TypeScript driver can rotate engines across rounds without paying
torch's start-up each time). Engines:
  st         sentence-transformers CrossEncoder(HF_DIR, max_length=L).predict(pairs, batch_size=B,
             activation_fn=Identity) with torch.set_num_threads(threads): the logits.
  ort        a straight onnxruntime loop over ONNX_DIR/onnx/model.onnx: intra_op_num_threads =
             threads, graph optimisation ALL, pairs tokenized with `tokenizers` (the folder's
             tokenizer.json, truncation longest_first at L, padded to the batch's longest).
  ort-int8   the same loop over onnx/model_int8.onnx.
  flashrank  flashrank.Ranker(<name>, cache_dir=DIR/flashrank, max_length=L).rerank(...): the
             library as users call it (its own ORT session with default options, its tokenizer
             set-up); it returns sigmoid probabilities, sorted.
  flashrank-int8  the same on the int8 graph.
Commands: {"cmd": "scores", "engine", "requests": [i, ...]} -> logits (probabilities for
flashrank) in pair order; {"cmd": "per_request", "engine", "seconds", "start", "batch_size"?} ->
one call per request (k pairs), back to back: latencies; {"cmd": "batched", "engine", "start",
"count", "batch_size"} -> one call over the pairs of `count` requests (st: one predict(); ort: the
pairs tokenized together, sorted by length, run in batches); {"cmd": "info"}; {"cmd": "quit"}.
Every timing also reports the process CPU time (all threads).
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# make


BENCH_MODELS = {
    # name: (ONNX folder, HF checkpoint folder or None = built by make from the encoder + head)
    "minilm-cross": (ROOT / "models/.cache/all-minilm-l6-v2-cross", None),
    "trained": (ROOT / "models/.cache/training/loco-scifact/model", ROOT / "models/.cache/training/loco-scifact/hf"),
}


def make_minilm_cross_hf(out):
    """transformers BertForSequenceClassification folder from the encoder + the seeded head."""
    from safetensors.numpy import load_file, save_file

    cross = BENCH_MODELS["minilm-cross"][0]
    encoder = ROOT / "models/.cache/hf/all-MiniLM-L6-v2"
    weights = {}
    for k, v in load_file(str(encoder / "model.safetensors")).items():
        if k == "embeddings.position_ids":
            continue
        weights["bert." + k] = v
    head = load_file(str(cross / "head.safetensors"))
    weights["classifier.weight"] = head["classifier.weight"]
    weights["classifier.bias"] = head["classifier.bias"]
    if "bert.pooler.dense.weight" not in weights:
        raise SystemExit("make: the encoder has no pooler: cannot build BertForSequenceClassification")
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.copy() for k, v in weights.items()}, str(out / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((cross / "config.json").read_text())
    config.pop("_name_or_path", None)
    config["architectures"] = ["BertForSequenceClassification"]
    config["id2label"] = {"0": "LABEL_0"}
    config["label2id"] = {"LABEL_0": 0}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for f in TOKENIZER_FILES:
        if (cross / f).exists():
            shutil.copyfile(cross / f, out / f)


def make_flashrank(root, name, onnx_dir):
    """FlashRank's cache layout: cache_dir/<model_name>/<file>, with the model file registered at run time."""
    for suffix, onnx in (("", "model.onnx"), ("-int8", "model_int8.onnx")):
        src = onnx_dir / "onnx" / onnx
        if not src.exists():
            continue
        d = root / f"{name}{suffix}"
        d.mkdir(parents=True, exist_ok=True)
        link = d / f"{name}{suffix}.onnx"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(src.resolve())
        shutil.copyfile(onnx_dir / "config.json", d / "config.json")
        for f in TOKENIZER_FILES:
            if (onnx_dir / f).exists():
                shutil.copyfile(onnx_dir / f, d / f)


def fuse(onnx_dir, out):
    """onnxruntime.transformers' offline BERT fusions of the fp32 graph (opt_level 0: fusions only;
    the session applies its own graph optimisations on top)."""
    import logging

    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    cfg = json.loads((onnx_dir / "config.json").read_text())
    m = optimize_model(
        str(onnx_dir / "onnx" / "model.onnx"),
        model_type="bert",
        num_heads=int(cfg["num_attention_heads"]),
        hidden_size=int(cfg["hidden_size"]),
        opt_level=0,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    m.save_model_to_file(str(out))
    return {k: v for k, v in m.get_fused_operator_statistics().items() if v}


def cmd_make_tiny(args):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    out = Path(args.dir).resolve() / "tinybert-l2" / "hf"
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(42)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=512,
        max_position_embeddings=512,
        type_vocab_size=2,
        num_labels=1,
        pad_token_id=0,
    )
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(str(out), safe_serialization=True)
    cross = BENCH_MODELS["minilm-cross"][0]
    for f in TOKENIZER_FILES:
        if (cross / f).exists():
            shutil.copyfile(cross / f, out / f)
    print(json.dumps({"hf": str(out), "sha256": sha256(out / "model.safetensors")}))


def cmd_make(args):
    out = Path(args.dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    meta = {"models": {}}
    for name, (onnx_dir, hf) in BENCH_MODELS.items():
        if not (onnx_dir / "onnx" / "model.onnx").exists():
            print(f"make: {onnx_dir}/onnx/model.onnx missing: skipping {name}", file=sys.stderr)
            continue
        if hf is None:
            hf = out / name / "hf"
            make_minilm_cross_hf(hf)
        cfg = json.loads((hf / "config.json").read_text())
        if cfg.get("architectures") != ["BertForSequenceClassification"]:
            raise SystemExit(f"make: {hf} is not a BertForSequenceClassification checkpoint: {cfg.get('architectures')}")
        make_flashrank(out / "flashrank", name, onnx_dir)
        fused = fuse(onnx_dir, out / name / "model-fused.onnx")
        meta["models"][name] = {
            "fused": fused,
            "onnxDir": str(onnx_dir),
            "hf": str(hf),
            "sha256": {
                "onnx/model.onnx": sha256(onnx_dir / "onnx" / "model.onnx"),
                "hf/model.safetensors": sha256(hf / "model.safetensors"),
            },
        }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta, indent=2))


# ---------------------------------------------------------------------------------------------
# serve


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p / 100 * len(sorted_values)))]


class StEngine:
    def __init__(self, hf, max_length, threads):
        import torch
        from sentence_transformers import CrossEncoder

        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        self.torch = torch
        self.model = CrossEncoder(str(hf), device="cpu", max_length=max_length, local_files_only=True)
        self.identity = torch.nn.Identity()
        self.default_batch = 32

    def score(self, pairs, batch_size=None):
        out = self.model.predict(
            pairs,
            batch_size=batch_size or self.default_batch,
            activation_fn=self.identity,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [float(x) for x in out.reshape(-1)]

    def info(self):
        import sentence_transformers
        import transformers

        return {
            "sentence-transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": self.torch.__version__,
            "threads": self.torch.get_num_threads(),
            "maxLength": self.model.max_seq_length,
        }


class OrtEngine:
    def __init__(self, onnx_dir, max_length, threads, file="model.onnx"):
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.np = np
        self.ort = ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(str(onnx_dir / "onnx" / file), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        cfg = json.loads((onnx_dir / "config.json").read_text())
        self.pad = int(cfg.get("pad_token_id") or 0)
        self.tok = Tokenizer.from_file(str(onnx_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_length, strategy="longest_first", direction="right")
        self.tok.no_padding()
        self.default_batch = 32
        self.threads = threads
        self.file = file

    def _run(self, encs):
        np = self.np
        n = len(encs)
        seq = max(len(e.ids) for e in encs)
        ids = np.full((n, seq), self.pad, dtype=np.int64)
        mask = np.zeros((n, seq), dtype=np.int64)
        types = np.zeros((n, seq), dtype=np.int64)
        for b, e in enumerate(encs):
            m = len(e.ids)
            ids[b, :m] = e.ids
            mask[b, :m] = 1
            types[b, :m] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = types
        return self.session.run(None, feeds)[0].reshape(n, -1)[:, 0]

    def score(self, pairs, batch_size=None):
        """Tokenize all pairs (the Rust batch encoder), sort by length, run in batches."""
        encs = self.tok.encode_batch([(q, p) for q, p in pairs])
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        bs = batch_size or len(encs)
        out = [0.0] * len(encs)
        for s in range(0, len(order), bs):
            idx = order[s : s + bs]
            logits = self._run([encs[i] for i in idx])
            for i, v in zip(idx, logits):
                out[i] = float(v)
        return out

    def info(self):
        return {"onnxruntime": self.ort.__version__, "threads": self.threads, "file": self.file}


def flashrank_ranker(root, name, max_length):
    """flashrank.Ranker on a local folder: the model name is registered in FlashRank's own file map
    (its Ranker looks the file up there), and cache_dir/<name>/ already exists, so
    Ranker._prepare_model_dir skips the download."""
    import flashrank  # noqa: F401 - loads flashrank.Config and the flashrank.Ranker module

    config_module = sys.modules["flashrank.Config"]
    ranker_module = sys.modules["flashrank.Ranker"]  # `flashrank.Ranker` itself is the class
    config_module.model_file_map[name] = f"{name}.onnx"
    ranker_module.model_file_map[name] = f"{name}.onnx"  # the same dict, imported by name
    if not (Path(root) / name / f"{name}.onnx").exists():
        raise SystemExit(f"flashrank: {root}/{name}/{name}.onnx missing (run make)")
    return ranker_module.Ranker(model_name=name, cache_dir=str(root), max_length=max_length, log_level="WARNING")


class FlashRankEngine:
    def __init__(self, root, name, max_length):
        from flashrank import RerankRequest

        self.RerankRequest = RerankRequest
        self.ranker = flashrank_ranker(root, name, max_length)
        self.name = name

    def score(self, pairs, batch_size=None):
        # FlashRank takes one query and its passages per call: group consecutive pairs by query.
        out = []
        s = 0
        while s < len(pairs):
            e = s
            while e < len(pairs) and pairs[e][0] == pairs[s][0]:
                e += 1
            passages = [{"id": i, "text": pairs[i][1]} for i in range(s, e)]
            ranked = self.ranker.rerank(self.RerankRequest(query=pairs[s][0], passages=passages))
            by_id = {r["id"]: float(r["score"]) for r in ranked}
            out.extend(by_id[i] for i in range(s, e))
            s = e
        return out

    def info(self):
        import importlib.metadata as md

        import onnxruntime as ort

        so = self.ranker.session.get_session_options()
        return {
            "flashrank": md.version("flashrank"),
            "onnxruntime": ort.__version__,
            "intraOpThreads": so.intra_op_num_threads,
            "note": "ORT session with default options (intra_op_num_threads 0 = one per physical core)",
            "file": str(Path(self.ranker.model_dir)),
        }


def cmd_serve(args):
    with open(args.requests, encoding="utf-8") as f:
        requests = json.load(f)
    hf = Path(args.hf)
    onnx_dir = Path(args.onnx_dir)
    engines = {}

    def engine(name):
        if name not in engines:
            if name == "st":
                engines[name] = StEngine(hf, args.max_length, args.threads)
            elif name == "ort":
                engines[name] = OrtEngine(onnx_dir, args.max_length, args.threads)
            elif name == "ort-int8":
                engines[name] = OrtEngine(onnx_dir, args.max_length, args.threads, "model_int8.onnx")
            elif name == "flashrank":
                engines[name] = FlashRankEngine(args.flashrank_root, args.model, args.max_length)
            elif name == "flashrank-int8":
                engines[name] = FlashRankEngine(args.flashrank_root, f"{args.model}-int8", args.max_length)
            else:
                raise ValueError(f"unknown engine {name}")
        return engines[name]

    def pairs_of(i):
        r = requests[i % len(requests)]
        return [(r["query"], p) for p in r["passages"]]

    def answer(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    answer({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        cmd = json.loads(line)
        try:
            c = cmd["cmd"]
            if c == "quit":
                answer({"bye": True})
                return
            if c == "load":
                t0 = time.perf_counter()
                e = engine(cmd["engine"])
                answer({"loadedMs": (time.perf_counter() - t0) * 1000, "info": e.info()})
            elif c == "info":
                answer({"info": engine(cmd["engine"]).info()})
            elif c == "scores":
                e = engine(cmd["engine"])
                out = []
                for i in cmd["requests"]:
                    out.extend(e.score(pairs_of(i), cmd.get("batch_size")))
                answer({"scores": out})
            elif c == "per_request":
                e = engine(cmd["engine"])
                bs = cmd.get("batch_size")
                i = cmd.get("start", 0)
                lat, pairs = [], 0
                cpu0 = time.process_time()
                t_start = time.perf_counter()
                end = t_start + cmd["seconds"]
                min_calls = cmd.get("min_calls", 3)
                while time.perf_counter() < end or len(lat) < min_calls:
                    p = pairs_of(i)
                    i += 1
                    t0 = time.perf_counter()
                    e.score(p, bs)
                    lat.append((time.perf_counter() - t0) * 1000)
                    pairs += len(p)
                elapsed = time.perf_counter() - t_start
                cpu = time.process_time() - cpu0
                answer({
                    "latenciesMs": lat,
                    "pairs": pairs,
                    "elapsedMs": elapsed * 1000,
                    "pairsPerSec": pairs / elapsed,
                    "cpuMsPerPair": cpu * 1000 / pairs,
                    "next": i,
                })
            elif c == "batched":
                e = engine(cmd["engine"])
                start, count = cmd.get("start", 0), cmd["count"]
                pairs = [pp for i in range(start, start + count) for pp in pairs_of(i)]
                cpu0 = time.process_time()
                t0 = time.perf_counter()
                e.score(pairs, cmd["batch_size"])
                elapsed = time.perf_counter() - t0
                cpu = time.process_time() - cpu0
                answer({
                    "pairs": len(pairs),
                    "elapsedMs": elapsed * 1000,
                    "pairsPerSec": len(pairs) / elapsed,
                    "cpuMsPerPair": cpu * 1000 / len(pairs),
                    "next": start + count,
                })
            else:
                raise ValueError(f"unknown command {c}")
        except Exception as exc:  # noqa: BLE001 - reported to the driver, which fails the run
            import traceback

            answer({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()})


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    t = sub.add_parser("make-tiny")
    t.add_argument("dir")
    s = sub.add_parser("serve")
    s.add_argument("--requests", required=True)
    s.add_argument("--model", required=True, help="bench model name (the FlashRank folder name)")
    s.add_argument("--hf", required=True)
    s.add_argument("--onnx-dir", required=True)
    s.add_argument("--flashrank-root", required=True)
    s.add_argument("--max-length", type=int, required=True)
    s.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.cmd == "make":
        cmd_make(args)
    elif args.cmd == "make-tiny":
        cmd_make_tiny(args)
    else:
        cmd_serve(args)


if __name__ == "__main__":
    main()
