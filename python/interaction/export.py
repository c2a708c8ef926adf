"""Export a fold's interaction head (train.py --save) with the frozen encoder as one ONNX
graph over the engine's pair input, and check it against the cached-feature path on real pairs.

  python export.py <head.pt> <hf model dir> <out.onnx> [lists.jsonl for the check] [--signals heads.pt]

--signals adds signal_heads.py's heads as further logits columns after `relevant`
(logits [batch, 1 + heads], in the heads file's order; config.json must name them).
"""
import json
import sys

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import BertModel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from graph import InteractionScorer  # noqa: E402

MUS = [0.9, 0.7, 0.5, 0.3, 0.1]
SIGMA, K1, B, AVGLEN = 0.1, 1.2, 0.75, 160.0


class LinearHead(torch.nn.Module):
    def __init__(self, state):
        super().__init__()
        w = state["net.weight"][0] / state["std"]
        self.register_buffer("w", w)
        self.register_buffer("b", state["net.bias"] - (w * state["mean"]).sum())

    def forward(self, x):
        return x @ self.w + self.b


class SignalHeads(torch.nn.Module):
    """relevant, then each further head's logit: [batch, 1 + heads]."""

    def __init__(self, relevance, extra):
        super().__init__()
        self.relevance = relevance
        self.register_buffer("w", torch.stack([h["w"] for h in extra], 1))  # [features, heads]
        self.register_buffer("b", torch.stack([h["b"].reshape(()) for h in extra]))

    def forward(self, x):
        return torch.cat([self.relevance(x).unsqueeze(-1), x @ self.w + self.b], 1)


argv = list(sys.argv)
signals = None
if "--signals" in argv:
    at = argv.index("--signals")
    signals = torch.load(argv[at + 1], weights_only=False)
    del argv[at : at + 2]
sys.argv = argv
saved = torch.load(sys.argv[1], weights_only=False)
assert saved["kind"] == "linear" and not saved["bigram"]
bert = BertModel.from_pretrained(sys.argv[2], add_pooling_layer=False).eval()
head = LinearHead(saved["head"])
if signals is not None:
    head = SignalHeads(head, [signals["heads"][name] for name in signals["order"]])
    print("signals: relevant,", ", ".join(signals["order"]))
model = InteractionScorer(bert, saved["idf"], head, MUS, SIGMA, K1, B, AVGLEN).eval()
tok = Tokenizer.from_file(f"{sys.argv[2]}/tokenizer.json")
tok.enable_truncation(256, strategy="longest_first")
tok.enable_padding()
pairs = [("a claim about cells", "cells divide. the cell cycle is regulated."), ("x", "y z")]
enc = tok.encode_batch(pairs)
ids = torch.tensor([e.ids for e in enc])
mask = torch.tensor([e.attention_mask for e in enc])
types = torch.tensor([e.type_ids for e in enc])
torch.onnx.export(
    model,
    (ids, mask, types),
    sys.argv[3],
    input_names=["input_ids", "attention_mask", "token_type_ids"],
    output_names=["logits"],
    dynamic_axes={n: {0: "batch_size", 1: "sequence_length"} for n in ["input_ids", "attention_mask", "token_type_ids"]}
    | {"logits": {0: "batch_size"}},
    opset_version=17,
    dynamo=False,
)
print("exported", sys.argv[3])
if len(sys.argv) > 4:
    import onnxruntime as ort

    sess = ort.InferenceSession(sys.argv[3])
    with open(sys.argv[4]) as f:
        rec = json.loads(f.readline())
    texts = [(rec["query"], d["text"]) for d in rec["docs"][:16]]
    enc = tok.encode_batch(texts)
    feed = {
        "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
    }
    onnx_logits = sess.run(None, feed)[0]
    with torch.no_grad():
        torch_logits = model(*(torch.tensor(feed[k]) for k in feed)).numpy()
    print("onnx vs torch max |d|", float(np.abs(onnx_logits - torch_logits).max()))
    print("logits", np.round(onnx_logits, 3).tolist())
