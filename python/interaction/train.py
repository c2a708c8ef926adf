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
import json
import math
import time

import numpy as np
import torch
from tokenizers import Tokenizer

COLLECTIONS = ["cisi", "cranfield", "med", "nfcorpus", "scifact"]
MUS = [0.9, 0.7, 0.5, 0.3, 0.1]
SIGMA = 0.1
CLS, SEP = 101, 102
K1, B, AVGLEN = 1.2, 0.75, 160.0

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
z = np.load(f"{args.seg}.npz")
IDS, STATES, OFF = z["ids"], z["states"], z["offsets"]
TEXT_INDEX = {t: i for i, t in enumerate(json.load(open(f"{args.seg}.json")))}


def seg(text):
    i = TEXT_INDEX[text]
    return IDS[OFF[i] : OFF[i + 1]], STATES[OFF[i] : OFF[i + 1]].astype(np.float32)


def load_lists(name):
    with open(f"{args.lists}/{name}.jsonl") as f:
        return [json.loads(line) for line in f]


# Per-pair raw material independent of the IDF table: per query term the kernel sums, max-sim, tf.
def raw_list(rec):
    q_ids, q_h = seg(rec["query"])
    keep = (q_ids != CLS) & (q_ids != SEP)
    q_terms = q_ids[keep]
    qn = q_h[keep] / np.linalg.norm(q_h[keep], axis=1, keepdims=True)
    q_mean = q_h.mean(0)
    out = []
    for d in rec["docs"]:
        p_ids, p_h = seg(d["text"])
        # the pair's window: 256 tokens for [CLS] q [SEP] p [SEP]
        room = max(8, 256 - 3 - len(q_terms))
        pk = (p_ids != CLS) & (p_ids != SEP)
        p_terms, p_t = p_ids[pk][:room], p_h[pk][:room]
        p_mean = np.concatenate([p_h[:1], p_t, p_h[-1:]]).mean(0)
        cos = float(q_mean @ p_mean / (np.linalg.norm(q_mean) * np.linalg.norm(p_mean)))
        pn = p_t / np.linalg.norm(p_t, axis=1, keepdims=True)
        S = qn @ pn.T  # [q, p]
        K = np.stack([np.exp(-((S - mu) ** 2) / (2 * SIGMA**2)).sum(1) for mu in MUS], 1)  # [q, k]
        E = q_terms[:, None] == p_terms[None, :]
        tf = E.sum(1).astype(np.float32)
        bi = (E[:-1, :-1] & E[1:, 1:]).any(1).astype(np.float32) if len(q_terms) > 1 else np.zeros(0, np.float32)
        out.append((cos, S.max(1), K, tf, len(p_terms), bi))
    return q_terms, out


def idf_table(names):
    tok = Tokenizer.from_file(f"{args.model_dir}/tokenizer.json")
    tok.enable_truncation(256)
    df = np.zeros(tok.get_vocab_size(), dtype=np.float64)
    n = 0
    for name in names:
        with open(f"{args.data}/{name}/docs.jsonl") as f:
            docs = [json.loads(line) for line in f]
        for e in tok.encode_batch([f"{d.get('title', '')} {d['text']}".strip() for d in docs]):
            df[np.unique(np.array(e.ids))] += 1
        n += len(docs)
    return np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)


def features(q_terms, raw, idf):
    w = idf[q_terms]
    wn = w / max(w.sum(), 1e-6)
    rows = []
    wb = w[:-1] + w[1:]
    wbn = wb / max(wb.sum(), 1e-6)
    for cos, maxsim, K, tf, plen, bi in raw:
        norm = K1 * (1 - B + B * plen / AVGLEN)
        bm25 = float((w * tf * (K1 + 1) / (tf + norm)).sum())
        row = [cos, float(wn @ maxsim), float(wn @ (tf > 0)), bm25 / max(w.sum(), 1e-6), math.log1p(bm25), math.log(plen + 1)]
        row += list(wn @ np.log1p(K))
        if args.bigram:
            row += [float(wbn @ bi) if len(bi) else 0.0]
        rows.append(row)
    return np.array(rows, dtype=np.float32)


def ndcg10(scores, rec):
    order = np.argsort(-scores, kind="stable")
    gains = [rec["docs"][i]["grade"] for i in order[:10]]
    dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
    ideal = sorted([g for g in rec["judgments"].values() if g > 0], reverse=True)[:10]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else None


import os
import pickle

raw = {}
for name in COLLECTIONS + ["scifact-train"]:
    cache = f"{args.lists}/raw-{name}.pkl"
    if os.path.exists(cache):
        raw[name] = pickle.load(open(cache, "rb"))
    else:
        recs = load_lists(name)
        raw[name] = (recs, [raw_list(r) for r in recs])
        pickle.dump(raw[name], open(cache, "wb"))
    print(f"raw {name}: {len(raw[name][0])} lists, {time.time() - t0:.0f}s", flush=True)


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
