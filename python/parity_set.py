"""The parity set of the imported-model tests: real passages and (query, passage) pairs from
../shared/data, chosen by fixed rules (file order and strides, no randomness), so the fetch script
and the Node tests see the same texts.

    python/.venv/bin/python python/parity_set.py --data ../shared/data --out models/.cache/reference

Writes, only when their content changes:
  OUT/parity-texts.jsonl  {"id": "<collection>/<doc id>", "text": ...}: passage = title + " " + text,
                          trimmed (../shared/data/README.md). In this order, without repeats:
                            - the 24 shortest passages of all collections (near-empty: Cranfield
                              has empty records, others a few words);
                            - 150 passages with non-ASCII characters (SciFact: Greek letters, accents,
                              symbols), evenly spaced over the shorter half of them by length;
                            - the 60 longest passages (thousands of characters: far beyond a
                              256-token window);
                            - evenly spaced passages of Cranfield, CISI, MED and NFCorpus among
                              each one's shorter 30 % (by characters), interleaved, up to 1,050 in
                              all (SciFact's abstracts mostly exceed the window; its non-ASCII and
                              longest passages are in already).
                          About 143,000 tokens: the float64 reference costs ~1 ms per token on one
                          core, so shorter passages keep the fetch script within a few minutes; the
                          window is still exceeded by the long passages and most non-ASCII ones.
  OUT/parity-pairs.jsonl  {"id": "<collection>/<query id>/<doc id>", "query", "passage"}: judged
                          pairs, the first judged document of up to 24 evenly spaced judged queries
                          per collection, plus 8 pairs with a near-empty passage and 8 with a long
                          query (a passage's text used as the query, with another long passage).

Python tooling only; reads nothing but ../shared/data.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COLLECTIONS = ["cranfield", "cisi", "med", "scifact", "nfcorpus"]
TOTAL_TEXTS = 1050
SHORTEST = 24
NON_ASCII = 150
LONGEST = 60
SHORTER_FRACTION = 0.3
# SciFact's abstracts are long (most exceed the window); its non-ASCII and longest passages are in already.
SPREAD_COLLECTIONS = ["cranfield", "cisi", "med", "nfcorpus"]
PAIRS_PER_COLLECTION = 24


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def spaced(items: list, count: int) -> list:
    """`count` items evenly spaced over the list, in order (all of them when it is shorter)."""
    if count >= len(items):
        return list(items)
    return [items[(i * len(items)) // count] for i in range(count)]


def load(data: Path) -> tuple[dict[str, list[tuple[str, str]]], dict[str, dict[str, str]], dict[str, list[tuple[str, str]]]]:
    docs, queries, judged = {}, {}, {}
    for c in COLLECTIONS:
        docs[c] = [(d["id"], f"{d.get('title') or ''} {d.get('text') or ''}".strip()) for d in read_jsonl(data / c / "docs.jsonl")]
        queries[c] = {q["id"]: q["text"] for q in read_jsonl(data / c / "queries.jsonl")}
        by_id = {i for i, _ in docs[c]}
        pairs: dict[str, str] = {}
        with open(data / c / "qrels.tsv", encoding="utf-8") as f:
            next(f)
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 3 and parts[0] in queries[c] and parts[1] in by_id and int(parts[2]) > 0:
                    pairs.setdefault(parts[0], parts[1])
        judged[c] = list(pairs.items())
    return docs, queries, judged


def texts_of(docs: dict[str, list[tuple[str, str]]]) -> list[dict]:
    every = [(f"{c}/{i}", t) for c in COLLECTIONS for i, t in docs[c]]
    chosen: dict[str, str] = {}

    def take(items):
        for key, text in items:
            if len(chosen) >= TOTAL_TEXTS:
                return
            chosen.setdefault(key, text)

    by_length = sorted(every, key=lambda kv: (len(kv[1]), kv[0]))
    take(by_length[:SHORTEST])
    non_ascii = [kv for kv in by_length if any(ord(ch) > 127 for ch in kv[1])]
    take(spaced(non_ascii[: len(non_ascii) // 2], NON_ASCII))
    take(sorted(every, key=lambda kv: (-len(kv[1]), kv[0]))[:LONGEST])
    # The rest: evenly spaced over each collection's shorter passages (file order), interleaved.
    per = []
    for c in SPREAD_COLLECTIONS:
        items = [(f"{c}/{i}", t) for i, t in docs[c]]
        cut = sorted(len(t) for _, t in items)[int(SHORTER_FRACTION * (len(items) - 1))]
        per.append(spaced([kv for kv in items if len(kv[1]) <= cut and kv[0] not in chosen], TOTAL_TEXTS))
    take([item for group in zip(*per) for item in group])
    return [{"id": k, "text": t} for k, t in chosen.items()]


def pairs_of(docs, queries, judged) -> list[dict]:
    out = []
    text_of = {c: dict(docs[c]) for c in COLLECTIONS}
    for c in COLLECTIONS:
        for qid, did in spaced(judged[c], PAIRS_PER_COLLECTION):
            out.append({"id": f"{c}/{qid}/{did}", "query": queries[c][qid], "passage": text_of[c][did]})
    every = [(c, i, t) for c in COLLECTIONS for i, t in docs[c]]
    shortest = sorted(every, key=lambda x: (len(x[2]), x[0], x[1]))[:8]
    longest = sorted(every, key=lambda x: (-len(x[2]), x[0], x[1]))[:16]
    first_query = {c: next(iter(queries[c].items())) for c in COLLECTIONS}
    for c, i, t in shortest:
        qid, q = first_query[c]
        out.append({"id": f"{c}/{qid}/{i}#near-empty", "query": q, "passage": t})
    for (c, i, t), (c2, i2, t2) in zip(longest[:8], longest[8:]):
        out.append({"id": f"{c}/{i}#as-query/{c2}/{i2}", "query": t, "passage": t2})
    return out


def write_if_changed(path: Path, rows: list[dict]) -> bool:
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if path.is_file() and path.read_text(encoding="utf-8") == data:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(data, encoding="utf-8")
    tmp.replace(path)
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description="Writes the parity set (see the module docstring).")
    ap.add_argument("--data", required=True, type=Path, help="../shared/data")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    docs, queries, judged = load(args.data)
    texts = texts_of(docs)
    pairs = pairs_of(docs, queries, judged)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("parity-texts.jsonl", texts), ("parity-pairs.jsonl", pairs)):
        changed = write_if_changed(args.out / name, rows)
        print(f"{args.out / name}: {len(rows)} rows{'' if changed else ' (unchanged)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
