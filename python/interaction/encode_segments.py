"""Token states of every query and passage in the dumped BM25 lists, each text encoded alone by the
frozen all-MiniLM-L6-v2 encoder ([CLS] text [SEP], up to 256 tokens): what the segment-local
interaction model's graph computes for each segment of a pair.

  python encode_segments.py <model dir> <out prefix> lists.jsonl...

Writes <prefix>.npz: texts' token ids and fp16 states, concatenated, with offsets, and an index json.
"""
import json
import sys
import time

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import BertModel

torch.manual_seed(0)
torch.set_num_threads(2)
model_dir, prefix, *lists = sys.argv[1:]
tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
tok.enable_truncation(256)
tok.no_padding()
texts: dict[str, int] = {}
for path in lists:
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            texts.setdefault(rec["query"], len(texts))
            for d in rec["docs"]:
                texts.setdefault(d["text"], len(texts))
order = list(texts.keys())
print(f"{len(order)} texts", flush=True)
enc = [tok.encode(t).ids for t in order]
model = BertModel.from_pretrained(model_dir, add_pooling_layer=False).eval()
idx = sorted(range(len(order)), key=lambda i: len(enc[i]))
states: list[np.ndarray | None] = [None] * len(order)
t0 = time.time()
budget = 8192  # tokens per batch
i = 0
with torch.inference_mode():
    while i < len(idx):
        n = max(1, budget // len(enc[idx[min(i + 1, len(idx) - 1)]]))
        batch = idx[i : i + n]
        L = max(len(enc[j]) for j in batch)
        ids = torch.zeros((len(batch), L), dtype=torch.long)
        mask = torch.zeros((len(batch), L), dtype=torch.long)
        for r, j in enumerate(batch):
            ids[r, : len(enc[j])] = torch.tensor(enc[j])
            mask[r, : len(enc[j])] = 1
        out = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
        for r, j in enumerate(batch):
            states[j] = out[r, : len(enc[j])].to(torch.float16).numpy()
        i += len(batch)
        if (i // len(batch)) % 20 == 0:
            print(f"{i}/{len(idx)} {time.time() - t0:.0f}s", flush=True)
offsets = np.zeros(len(order) + 1, dtype=np.int64)
offsets[1:] = np.cumsum([len(e) for e in enc])
np.savez(
    f"{prefix}.npz",
    ids=np.concatenate([np.array(e, dtype=np.int32) for e in enc]),
    states=np.concatenate(states),
    offsets=offsets,
)
with open(f"{prefix}.json", "w") as f:
    json.dump(order, f)
print(f"done {time.time() - t0:.0f}s", flush=True)
