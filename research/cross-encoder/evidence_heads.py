"""Can the segment-local interaction features (and the two texts' pooled vectors) tell SciFact's
SUPPORT / CONTRADICT / NOINFO apart? Logistic heads trained on the official training split's
judged pairs (plus BM25 negatives for `evidence`), measured on the test split (AUC).

  python evidence_heads.py <seg prefix> <lists dir> <data dir>
"""
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/../../python/interaction")
from evidence import auc, load_evidence_labels  # noqa: E402
from features import Segments, features, idf_table, load_raw  # noqa: E402

seg_prefix, lists_dir, data_dir = sys.argv[1:4]
seg = Segments(seg_prefix)
labels = load_evidence_labels(data_dir)
idf = idf_table("models/.cache/hf/all-MiniLM-L6-v2", data_dir, ["cisi", "cranfield", "med", "nfcorpus", "scifact"])


def pooled(text):
    _, h = seg(text)
    m = h.mean(0)
    return m / np.linalg.norm(m)


def rows(name, with_vectors):
    recs, rl = raw[name]
    X, lab = [], []
    for rec, (q_terms, r) in zip(recs, rl):
        if not r:
            continue
        f = features(q_terms, r, idf)
        qv = pooled(rec["query"]) if with_vectors else None
        for d, fr in zip(rec["docs"], f):
            x = list(fr)
            if with_vectors:
                x += list(qv * pooled(d["text"]))
            X.append(x)
            lab.append(labels.get((rec["queryId"], d["id"]), "NONE"))
    return np.array(X, dtype=np.float32), np.array(lab)


def fit(X, y, l2=1e-3, epochs=300):
    X = torch.tensor(X)
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Xn = (X - mu) / sd
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    yt = torch.tensor(y, dtype=torch.float32)
    opt = torch.optim.LBFGS([w, b], max_iter=epochs)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(Xn @ w + b, yt) + l2 * (w**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return lambda Z: ((torch.tensor(Z) - mu) / sd @ w + b).detach().numpy()


raw = load_raw(seg_prefix, lists_dir, ["scifact", "scifact-train"])
for with_vectors in (False, True):
    Xtr, ltr = rows("scifact-train", with_vectors)
    Xte, lte = rows("scifact", with_vectors)
    tag = "features + q⊙p" if with_vectors else "features"
    ev_tr = np.isin(ltr, ["SUPPORT", "CONTRADICT"]).astype(int)
    ev_te = np.isin(lte, ["SUPPORT", "CONTRADICT"]).astype(int)
    ev = fit(Xtr, ev_tr)(Xte)
    print(f"[{tag}] evidence vs rest of BM25 top 100: AUC {auc(ev, ev_te):.3f} ({ev_te.sum()} evidence pairs of {len(ev_te)})")
    judged_te = lte != "NONE"
    print(f"[{tag}] evidence vs NOINFO (judged pairs only): AUC {auc(ev[judged_te], ev_te[judged_te]):.3f}")
    judged_tr = np.isin(ltr, ["SUPPORT", "CONTRADICT"])
    con = fit(Xtr[judged_tr], (ltr[judged_tr] == "CONTRADICT").astype(int))
    te_mask = np.isin(lte, ["SUPPORT", "CONTRADICT"])
    c = con(Xte[te_mask])
    print(f"[{tag}] CONTRADICT vs SUPPORT (evidence pairs): AUC {auc(c, (lte[te_mask] == 'CONTRADICT').astype(int)):.3f} "
          f"({(lte[te_mask] == 'CONTRADICT').sum()} / {te_mask.sum()})")
