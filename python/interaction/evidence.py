"""SciFact's evidence labels (evidence_labels.tsv: SUPPORT / CONTRADICT / NOINFO per judged pair)
and the AUC the evidence and contradiction heads are measured by."""
import numpy as np


def load_evidence_labels(data_dir):
    """{(query id, doc id): label} over both splits."""
    labels = {}
    with open(f"{data_dir}/scifact/evidence_labels.tsv") as f:
        next(f)
        for line in f:
            q, d, _split, lab = line.rstrip("\n").split("\t")
            labels[(q, d)] = lab
    return labels


def auc(scores, labels):
    """Area under the ROC curve of `scores` for binary `labels` (ties by input order); NaN without both classes."""
    scores, labels = np.asarray(scores), np.asarray(labels)
    pos, neg = scores[labels == 1], scores[labels == 0]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))
