"""Trains the head of the segment-local interaction model over the frozen
all-MiniLM-L6-v2 encoder, leave-one-collection-out or (--final) once for shipping: query and
passage encoded each within its own segment (as the bi-encoder saw them), then a small trained
head over interaction features:
  - the bi-encoder cosine (mean-pooled states),
  - word-piece BM25 from exact id matches with an IDF table of the training corpora,
  - IDF-weighted soft-match kernels and max-sim over contextual token cosines,
  - exact-match coverage of the query's IDF mass, passage length.

  python python/interaction/train.py <seg prefix> <lists dir> <data dir> [--head linear|mlp] [--save PREFIX]
      [--train-on c1,c2] [--final]

Prints nDCG@10 of BM25's top 100 reranked, per held-out collection, beside BM25 and the cosine;
--save writes each fold's head (PREFIX-<held-out>.pt); --final trains one head (PREFIX-all.pt) on all five
collections or on --train-on.
Deterministic: seeded, CPU, the same inputs give bitwise-equal heads.
"""
import argparse
import math
import sys
import time

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from features import COLLECTIONS, features as pair_features, idf_table as corpus_idf, load_raw  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("seg")
ap.add_argument("lists")
ap.add_argument("data")
ap.add_argument("--head", default="mlp")
ap.add_argument("--model-dir", default="models/.cache/hf/all-MiniLM-L6-v2")
ap.add_argument("--epochs", type=int, default=60)
ap.add_argument("--bce", type=float, default=0.2)
ap.add_argument("--bigram", action="store_true")
ap.add_argument("--only", default="")
ap.add_argument("--save", default="")
ap.add_argument("--train-on", default="", help="comma list: train every fold on these collections only")
ap.add_argument("--final", action="store_true", help="train one head on all five collections (no held-out figure)")
args = ap.parse_args()
torch.manual_seed(0)
np.random.seed(0)

t0 = time.time()


def idf_table(names):
    return corpus_idf(args.model_dir, args.data, names)


def features(q_terms, raw, idf):
    return pair_features(q_terms, raw, idf, args.bigram)


def ndcg10(scores, rec):
    order = np.argsort(-scores, kind="stable")
    gains = [rec["docs"][i]["grade"] for i in order[:10]]
    dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
    ideal = sorted([g for g in rec["judgments"].values() if g > 0], reverse=True)[:10]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else None


raw = load_raw(args.seg, args.lists, COLLECTIONS + ["scifact-train"], lambda m: print(f"{m}, {time.time() - t0:.0f}s", flush=True))


class Head(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.mean = torch.nn.Parameter(torch.zeros(n), requires_grad=False)
        self.std = torch.nn.Parameter(torch.ones(n), requires_grad=False)
        self.net = (
            torch.nn.Linear(n, 1)
            if args.head == "linear"
            else torch.nn.Sequential(torch.nn.Linear(n, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        )

    def forward(self, x):
        return self.net((x - self.mean) / self.std).squeeze(-1)


def train(train_sets, idf):
    X, Y = [], []
    for name in train_sets:
        recs, rl = raw[name]
        for rec, (q_terms, r) in zip(recs, rl):
            y = np.array([d["grade"] for d in rec["docs"]], dtype=np.float32)
            if len(y) == 0 or y.max() <= 0:
                continue
            X.append(torch.tensor(features(q_terms, r, idf)))
            Y.append(torch.tensor(y))
    allx = torch.cat(X)
    head = Head(allx.shape[1])
    head.mean.data = allx.mean(0)
    head.std.data = allx.std(0) + 1e-6
    opt = torch.optim.Adam(head.net.parameters(), lr=1e-2)
    # each collection weighs the same whatever its number of queries
    counts = {}
    for name in train_sets:
        counts[name] = sum(1 for rec in raw[name][0] if max([d["grade"] for d in rec["docs"]], default=0) > 0)
    weights = []
    for name in train_sets:
        weights += [1.0 / counts[name]] * counts[name]
    weights = torch.tensor(weights)
    for epoch in range(args.epochs):
        perm = torch.randperm(len(X))
        total = 0.0
        for s in range(0, len(X), 32):
            opt.zero_grad()
            loss = 0.0
            for i in perm[s : s + 32].tolist():
                logits = head(X[i])
                target = Y[i] / Y[i].sum()
                listwise = -(target * torch.log_softmax(logits, 0)).sum()
                pointwise = torch.nn.functional.binary_cross_entropy_with_logits(logits, (Y[i] > 0).float())
                loss = loss + weights[i] * (listwise + args.bce * pointwise)
            loss.backward()
            opt.step()
            total += float(loss.detach())
    return head


results = {}
if args.final:
    pool = [c for c in COLLECTIONS if not args.train_on or c in args.train_on.split(",")]
    head = train([c if c != "scifact" else "scifact-train" for c in pool], idf_table(pool))
    torch.save({"head": head.state_dict(), "idf": idf_table(pool), "kind": args.head, "bigram": args.bigram}, f"{args.save}-all.pt")
    print(f"saved {args.save}-all.pt")
    raise SystemExit(0)
for held in [c for c in COLLECTIONS if not args.only or c in args.only.split(",")]:
    pool = [c for c in COLLECTIONS if c != held and (not args.train_on or c in args.train_on.split(","))]
    train_sets = [c if c != "scifact" else "scifact-train" for c in pool]
    idf = idf_table(pool)
    head = train(train_sets, idf)
    recs, rl = raw[held]
    nd = {"bm25": [], "cosine": [], "model": [], "wp-bm25": []}
    with torch.no_grad():
        for rec, (q_terms, r) in zip(recs, rl):
            if len(r) == 0:  # BM25 found nothing: every ranking scores 0, as in the engine's eval
                for v in nd.values():
                    v.append(0.0)
                continue
            f = features(q_terms, r, idf)
            scores = head(torch.tensor(f)).numpy()
            for key, s in (
                ("bm25", np.array([d["bm25"] for d in rec["docs"]])),
                ("cosine", f[:, 0]),
                ("wp-bm25", f[:, 4]),
                ("model", scores),
            ):
                v = ndcg10(s, rec)
                if v is not None:
                    nd[key].append(v)
    results[held] = {k: float(np.mean(v)) for k, v in nd.items()}
    if args.save:
        torch.save({"head": head.state_dict(), "idf": idf, "kind": args.head, "bigram": args.bigram}, f"{args.save}-{held}.pt")
    print(held, {k: round(v, 3) for k, v in results[held].items()}, f"{time.time() - t0:.0f}s", flush=True)
