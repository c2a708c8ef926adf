"""Trains the `evidence` and `contradicts_premise` heads of the interaction model on SciFact's
evidence labels (evidence_labels.tsv: SUPPORT / CONTRADICT / NOINFO per judged pair), over the
same eleven features and IDF table as the relevance head they are exported beside (export.py
--signals): logistic heads on the official training split's BM25 top 100 (judged pairs carry their
label, the unjudged rest count as no evidence), measured on the test split.

  python python/interaction/signal_heads.py <seg prefix> <lists dir> <data dir> <relevance head.pt> --save OUT.pt

evidence:            SUPPORT or CONTRADICT vs the rest (NOINFO and unjudged)
contradicts_premise: CONTRADICT vs the rest
A head is exported only when it separates its classes held out: `contradicts_premise` does not
(CONTRADICT vs SUPPORT at chance), so the saved export order is `evidence` alone. The exported
evidence head is decision-calibrated: its bias is shifted so that 0.5 (the default routing rule's
evidence level) falls where the F1 of evidence pairs among the training claims' BM25 top 20 is
highest; its output is that decision score, not a calibrated probability.
Deterministic (L-BFGS, CPU, no sampling). SciFact is CC BY-NC 2.0: heads trained here inherit its
terms, so they ship only in an opt-in model folder, never in the default one.
"""
import argparse
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from evidence import auc, load_evidence_labels  # noqa: E402
from features import features, load_raw  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("seg")
ap.add_argument("lists")
ap.add_argument("data")
ap.add_argument("relevance", help="the relevance head (train.py --save): its IDF table is the graph's")
ap.add_argument("--save", required=True)
ap.add_argument("--l2", type=float, default=1e-3)
args = ap.parse_args()
torch.manual_seed(0)

labels = load_evidence_labels(args.data)
relevance = torch.load(args.relevance, weights_only=False)
idf = relevance["idf"]
raw = load_raw(args.seg, args.lists, ["scifact-train", "scifact"])


def rows(name, top=100):
    recs, rl = raw[name]
    X, lab = [], []
    for rec, (q_terms, r) in zip(recs, rl):
        if not r:
            continue
        X.append(features(q_terms, r[:top], idf))
        lab += [labels.get((rec["queryId"], d["id"]), "NONE") for d in rec["docs"][:top]]
    return np.concatenate(X), np.array(lab)


def fit(X, y):
    """Logistic regression on standardized features; returns (w, b) over the raw features."""
    X = torch.tensor(X, dtype=torch.float64)
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Xn = (X - mu) / sd
    w = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    yt = torch.tensor(y, dtype=torch.float64)
    opt = torch.optim.LBFGS([w, b], max_iter=500, tolerance_grad=1e-10, tolerance_change=1e-12)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(Xn @ w + b, yt) + args.l2 * (w**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    w_raw = (w / sd).detach()
    return w_raw.float(), (b - (w_raw * mu).sum()).detach().float()


def f1_optimal_logit(logits, y):
    """The logit cut (mean of two neighbouring scores) with the highest F1 of `score ≥ cut`."""
    order = np.argsort(-logits, kind="stable")
    ranked, hits = logits[order], np.cumsum(y[order])
    kept = np.arange(1, len(y) + 1)
    f1 = 2 * hits / (kept + y.sum())
    best = int(np.argmax(f1))
    below = ranked[best + 1] if best + 1 < len(ranked) else ranked[best] - 1.0
    return float((ranked[best] + below) / 2), float(f1[best])


Xtr, ltr = rows("scifact-train")
Xte, lte = rows("scifact")
heads = {}
targets = {"evidence": ["SUPPORT", "CONTRADICT"], "contradicts_premise": ["CONTRADICT"]}
for name, positive in targets.items():
    w, b = fit(Xtr, np.isin(ltr, positive).astype(np.float64))
    heads[name] = {"w": w, "b": b}
    p = 1 / (1 + np.exp(-(Xte @ w.numpy() + b.numpy())))
    y = np.isin(lte, positive).astype(int)
    judged = lte != "NONE"
    line = f"{name}: held-out AUC vs the rest of the top 100 {auc(p, y):.3f}, vs judged pairs only {auc(p[judged], y[judged]):.3f}"
    if name == "contradicts_premise":
        ev = np.isin(lte, ["SUPPORT", "CONTRADICT"])
        line += f", CONTRADICT vs SUPPORT {auc(p[ev], (lte[ev] == 'CONTRADICT').astype(int)):.3f}"
    print(line)
    for lab in ["SUPPORT", "CONTRADICT", "NOINFO", "NONE"]:
        m = lte == lab
        print(f"  {lab:10s} n={m.sum():6d}  p≥0.5 {np.mean(p[m] >= 0.5):.3f}  median p {np.median(p[m]):.3f}")
# Decision calibration of the exported head on the training claims' top 20 (what the gate sees).
X20, l20 = rows("scifact-train", 20)
ev = heads["evidence"]
cut, f1 = f1_optimal_logit(X20 @ ev["w"].numpy() + ev["b"].numpy(), np.isin(l20, targets["evidence"]).astype(int))
exported = {"w": ev["w"], "b": ev["b"] - cut}
print(f"evidence decision calibration: F1 {f1:.3f} on the training claims' top 20 at logit {cut:.3f} (now 0.5)")
Xte20, lte20 = rows("scifact", 20)
p = 1 / (1 + np.exp(-(Xte20 @ exported["w"].numpy() + exported["b"].numpy())))
for lab in ["SUPPORT", "CONTRADICT", "NOINFO", "NONE"]:
    m = lte20 == lab
    print(f"  held-out top 20, {lab:10s} n={m.sum():5d}  evidence ≥ 0.5: {np.mean(p[m] >= 0.5):.3f}")
torch.save(
    {
        "heads": {"evidence": exported},
        "order": ["evidence"],
        "trained": heads,
        "train": "scifact train split (evidence_labels.tsv)",
    },
    args.save,
)
print("saved", args.save)
