"""Fine-tunes a BERT cross-encoder from a pretrained encoder folder on (query, passage) pairs.

Input: JSON lines of scripts/cross-encoder-pairs.ts (query, passage, relevant, evidence,
contradicts_premise; null = no label for that head). Output: a Hugging Face folder
(BertForSequenceClassification, one sigmoid logit per head, id2label = the engine's signal names)
that `relevance-gate import-model --as cross-encoder` turns into the engine's ONNX model folder.

Deterministic: one seed fixes the head's initialisation, the data order (a permutation per epoch)
and dropout; torch runs with deterministic algorithms and a fixed thread count, so the same inputs,
arguments, torch version and thread count give the same weights (TRAINING.json records all of
them). Resumable: a checkpoint (weights, optimiser, scheduler, step, RNG state) is written every
--checkpoint-every steps under OUT/.checkpoint and picked up by a rerun with the same arguments, so
a run interrupted at any point ends with the same files as an uninterrupted one.

    python/.venv/bin/python python/train_cross_encoder.py --pairs pairs.jsonl \
        --base models/.cache/hf/all-MiniLM-L6-v2 --out models/.cache/training/ce-fold \
        [--heads relevant,evidence,contradicts_premise] [--max-length 128] [--epochs 1] \
        [--batch-size 32] [--lr 5e-5] [--warmup 0.1] [--freeze-layers 0] [--seed 1] [--threads 2]

Needs the optional set (torch, transformers): `bash python/setup-venv.sh --with-sentence-transformers`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# cuBLAS needs a fixed workspace for deterministic results on a GPU.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from transformers import BertConfig, BertForSequenceClassification  # noqa: E402

HEAD_KEYS = {"relevant": "relevant", "evidence": "evidence", "contradicts_premise": "contradictsPremise"}
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json")
TRAINER_VERSION = 1


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_pairs(paths: list[str], heads: list[str]) -> list[dict]:
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                for key in ("query", "passage"):
                    if not isinstance(row.get(key), str):
                        raise SystemExit(f"{p}:{n}: {key} must be a string")
                targets = []
                for head in heads:
                    v = row.get(HEAD_KEYS[head])
                    if v is not None and v not in (0, 1):
                        raise SystemExit(f"{p}:{n}: {HEAD_KEYS[head]} must be 0, 1 or null")
                    targets.append(v)
                if targets[0] is None:
                    raise SystemExit(f"{p}:{n}: every pair needs the first head's label ({heads[0]})")
                rows.append({"query": row["query"], "passage": row["passage"], "targets": targets})
    if not rows:
        raise SystemExit("no training pairs")
    return rows


def encode(tokenizer: Tokenizer, rows: list[dict], max_length: int) -> list[tuple[list[int], list[int]]]:
    tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    tokenizer.no_padding()
    out = []
    for i in range(0, len(rows), 512):
        chunk = rows[i : i + 512]
        for enc in tokenizer.encode_batch([(r["query"], r["passage"]) for r in chunk]):
            out.append((enc.ids, enc.type_ids))
    return out


def collate(batch: list[tuple[list[int], list[int]]], targets: list[list], pad_id: int):
    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for r, (a, t) in enumerate(batch):
        ids[r, : len(a)] = torch.tensor(a)
        types[r, : len(t)] = torch.tensor(t)
        mask[r, : len(a)] = 1
    y = torch.tensor([[0.0 if v is None else float(v) for v in row] for row in targets])
    m = torch.tensor([[0.0 if v is None else 1.0 for v in row] for row in targets])
    return ids, types, mask, y, m


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", action="append", required=True)
    ap.add_argument("--base", required=True, help="pretrained encoder folder (config.json, safetensors, tokenizer.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--heads", default="relevant")
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--head-lr", type=float, default=0.0, help="learning rate of the pooler and classifier (0: --lr)")
    ap.add_argument(
        "--pooler-init",
        choices=("identity", "checkpoint"),
        default="identity",
        help="identity: the pooler starts as tanh(CLS) (a bi-encoder checkpoint's pooler maps CLS to near-zero)",
    )
    ap.add_argument("--warmup", type=float, default=0.1, help="share of steps with a linear warm-up")
    ap.add_argument("--freeze-layers", type=int, default=0, help="keep the embeddings and the first N layers fixed")
    ap.add_argument(
        "--model-max-length",
        type=int,
        default=256,
        help="tokenizer_config.json model_max_length of the output: the window the engine scores with",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="auto", help="cpu, cuda or auto (cuda when available)")
    ap.add_argument("--checkpoint-every", type=int, default=50)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: all epochs)")
    args = ap.parse_args()

    heads = args.heads.split(",")
    for h in heads:
        if h not in HEAD_KEYS:
            raise SystemExit(f"unknown head {h}; one of {', '.join(HEAD_KEYS)}")
    if heads[0] != "relevant":
        raise SystemExit("the first head must be relevant")

    torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else args.device if args.device != "auto" else "cpu")
    torch.use_deterministic_algorithms(True)
    base = Path(args.base)
    out = Path(args.out)
    pairs_sha = [sha256_file(Path(p)) for p in args.pairs]
    identity = {
        "trainer": TRAINER_VERSION,
        "args": {k: v for k, v in vars(args).items() if k not in ("checkpoint_every",)},
        "pairs_sha256": pairs_sha,
        "base_sha256": {f.name: sha256_file(f) for f in sorted(base.glob("*.safetensors"))},
        "torch": torch.__version__,
    }
    run_id = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]

    rows = read_pairs(args.pairs, heads)
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    encoded = encode(tokenizer, rows, args.max_length)
    targets = [r["targets"] for r in rows]
    pad_id = tokenizer.token_to_id("[PAD]") or 0

    seed_everything(args.seed)
    config = BertConfig.from_pretrained(base)
    config.num_labels = len(heads)
    config.id2label = {i: h for i, h in enumerate(heads)}
    config.label2id = {h: i for i, h in enumerate(heads)}
    config.problem_type = "multi_label_classification"
    model = BertForSequenceClassification.from_pretrained(base, config=config).to(device)
    if args.pooler_init == "identity":
        with torch.no_grad():
            model.bert.pooler.dense.weight.copy_(torch.eye(config.hidden_size))
            model.bert.pooler.dense.bias.zero_()
    frozen = [model.bert.embeddings] + list(model.bert.encoder.layer[: args.freeze_layers])
    for module in frozen:
        for p in module.parameters():
            p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    head_params = [p for n, p in model.named_parameters() if p.requires_grad and (n.startswith("classifier.") or ".pooler." in n)]
    head_ids = {id(p) for p in head_params}
    groups = [
        {"params": [p for p in params if id(p) not in head_ids], "lr": args.lr},
        {"params": head_params, "lr": args.head_lr if args.head_lr > 0 else args.lr},
    ]
    steps_per_epoch = math.ceil(len(encoded) / args.batch_size)
    total_steps = steps_per_epoch * args.epochs
    if args.max_steps > 0:
        total_steps = min(total_steps, args.max_steps)
    optimizer = torch.optim.AdamW(groups, lr=args.lr, weight_decay=0.01)
    warmup_steps = int(total_steps * args.warmup)

    def lr_at(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    step = 0
    losses: list[float] = []
    ckpt_dir = out / ".checkpoint"
    ckpt = ckpt_dir / "state.pt"
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=False, map_location=device)
        if state.get("run_id") == run_id:
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            torch.set_rng_state(state["torch_rng"].cpu())
            step = state["step"]
            losses = state["losses"]
            print(f"resuming run {run_id} at step {step} of {total_steps}", file=sys.stderr)
        else:
            print("checkpoint of other arguments or inputs: starting over", file=sys.stderr)

    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    model.train()
    started = time.time()
    trained_pairs = 0
    while step < total_steps:
        epoch = step // steps_per_epoch
        order = np.random.default_rng(args.seed * 1000 + epoch).permutation(len(encoded))
        b = step % steps_per_epoch
        idx = order[b * args.batch_size : (b + 1) * args.batch_size]
        ids, types, mask, y, m = collate([encoded[i] for i in idx], [targets[i] for i in idx], pad_id)
        ids, types, mask, y, m = ids.to(device), types.to(device), mask.to(device), y.to(device), m.to(device)
        logits = model(input_ids=ids, token_type_ids=types, attention_mask=mask).logits
        per = loss_fn(logits, y) * m
        loss = per.sum() / m.sum().clamp(min=1.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        trained_pairs += len(idx)
        losses.append(float(loss.detach()))
        if step % 10 == 0 or step == total_steps:
            rate = trained_pairs / max(1e-9, time.time() - started)
            recent = sum(losses[-10:]) / len(losses[-10:])
            print(f"step {step}/{total_steps} loss {recent:.4f} {rate:.1f} pairs/s", file=sys.stderr, flush=True)
        if step % args.checkpoint_every == 0 and step < total_steps:
            ckpt_dir.mkdir(parents=True, exist_ok=True)
            tmp = ckpt_dir / "state.pt.tmp"
            torch.save(
                {
                    "run_id": run_id,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "step": step,
                    "losses": losses,
                },
                tmp,
            )
            os.replace(tmp, ckpt)

    model.eval()
    staging = out.with_name(out.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (base / name).exists():
            shutil.copyfile(base / name, staging / name)
    tokenizer_config = staging / "tokenizer_config.json"
    if tokenizer_config.exists():
        fields = json.loads(tokenizer_config.read_text())
        fields["model_max_length"] = args.model_max_length
        tokenizer_config.write_text(json.dumps(fields, indent=2) + "\n")
    weights = staging / "model.safetensors"
    record = {
        **identity,
        "run_id": run_id,
        "heads": heads,
        "pairs": len(rows),
        "steps": total_steps,
        "device": str(device) if device.type == "cpu" else f"cuda ({torch.cuda.get_device_name(device)})",
        "threads": args.threads,
        "final_loss": sum(losses[-20:]) / max(1, len(losses[-20:])),
        "seconds_this_run": round(time.time() - started, 1),
        "model_sha256": sha256_file(weights),
    }
    (staging / "TRAINING.json").write_text(json.dumps(record, indent=2) + "\n")
    if (base / "PROVENANCE.json").exists():
        shutil.copyfile(base / "PROVENANCE.json", staging / "BASE_PROVENANCE.json")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(staging, out)
    print(json.dumps({"out": str(out), "model_sha256": record["model_sha256"], "steps": total_steps}))


if __name__ == "__main__":
    main()
