"""The interaction features of the segment-local model, computed from the cached token states of
encode_segments.py (graph.py computes the same inside the ONNX graph):
  - the bi-encoder cosine (mean-pooled states),
  - word-piece BM25 from exact id matches with an IDF table of the training corpora,
  - IDF-weighted soft-match kernels and max-sim over contextual token cosines,
  - exact-match coverage of the query's IDF mass, passage length.
"""
import json
import math
import os
import pickle

import numpy as np
from tokenizers import Tokenizer

COLLECTIONS = ["cisi", "cranfield", "med", "nfcorpus", "scifact"]
MUS = [0.9, 0.7, 0.5, 0.3, 0.1]
SIGMA = 0.1
CLS, SEP = 101, 102
K1, B, AVGLEN = 1.2, 0.75, 160.0


class Segments:
    """Each text's token ids and fp16 states from encode_segments.py (<prefix>.npz + .json)."""

    def __init__(self, prefix):
        z = np.load(f"{prefix}.npz")
        self.ids, self.states, self.offsets = z["ids"], z["states"], z["offsets"]
        self.index = {t: i for i, t in enumerate(json.load(open(f"{prefix}.json")))}

    def __call__(self, text):
        i = self.index[text]
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.ids[a:b], self.states[a:b].astype(np.float32)


def load_lists(lists_dir, name):
    with open(f"{lists_dir}/{name}.jsonl") as f:
        return [json.loads(line) for line in f]


def raw_list(seg, rec):
    """Per-pair raw material independent of the IDF table: per query term the kernel sums, max-sim, tf."""
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


def load_raw(seg_prefix, lists_dir, names, log=print):
    """{name: (records, raw per record)}, cached next to the lists as raw-<name>.pkl."""
    raw, seg = {}, None
    for name in names:
        cache = f"{lists_dir}/raw-{name}.pkl"
        if os.path.exists(cache):
            raw[name] = pickle.load(open(cache, "rb"))
        else:
            seg = seg or Segments(seg_prefix)
            recs = load_lists(lists_dir, name)
            raw[name] = (recs, [raw_list(seg, r) for r in recs])
            pickle.dump(raw[name], open(cache, "wb"))
        log(f"raw {name}: {len(raw[name][0])} lists")
    return raw


def idf_table(model_dir, data_dir, names):
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.enable_truncation(256)
    df = np.zeros(tok.get_vocab_size(), dtype=np.float64)
    n = 0
    for name in names:
        with open(f"{data_dir}/{name}/docs.jsonl") as f:
            docs = [json.loads(line) for line in f]
        for e in tok.encode_batch([f"{d.get('title', '')} {d['text']}".strip() for d in docs]):
            df[np.unique(np.array(e.ids))] += 1
        n += len(docs)
    return np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)


def features(q_terms, raw, idf, bigram=False):
    """[pairs × 11] (12 with bigram): the head's input, in graph.py's order."""
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
        if bigram:
            row += [float(wbn @ bi) if len(bi) else 0.0]
        rows.append(row)
    return np.array(rows, dtype=np.float32)
