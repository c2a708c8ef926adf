"""sentence-transformers as a benchmark peer of the embedding tier (bench/embedding.ts runs it).

Reads requests (a JSON list of {"query": str, "passages": [str]}) and measures, with torch limited
to --threads threads:
  - per request: model.encode([query] + passages) as one call (how a service embeds a k = 20
    request), back to back for --duration seconds: texts/s and the call's p50/p99;
  - bulk: every text of the requests encoded in one encode() call (batch_size 32, ST's default,
    which sorts by length itself): texts/s, the library's best case.
Prints one JSON object on stdout. Offline only: HF_HUB_OFFLINE=1; the model is a local folder.

Usage: python/.venv/bin/python python/bench_st.py --model models/.cache/hf/all-MiniLM-L6-v2 \
         --requests /tmp/requests.json --threads 2 --duration 10 --warmup 2
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p / 100 * len(sorted_values)))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--requests", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--bulk-texts", type=int, default=2000)
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    model = SentenceTransformer(args.model, device="cpu")
    with open(args.requests, encoding="utf-8") as f:
        requests = json.load(f)

    def per_request(seconds, cursor):
        latencies, texts = [], 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            r = requests[cursor % len(requests)]
            cursor += 1
            batch = [r["query"]] + r["passages"]
            t0 = time.perf_counter()
            with torch.inference_mode():
                model.encode(batch, batch_size=len(batch), normalize_embeddings=True, convert_to_numpy=True)
            latencies.append((time.perf_counter() - t0) * 1000)
            texts += len(batch)
        return latencies, texts, cursor

    per_request(args.warmup, 0)
    started = time.perf_counter()
    latencies, texts, _ = per_request(args.duration, 0)
    elapsed = time.perf_counter() - started
    latencies.sort()

    everything = []
    for r in requests:
        everything.append(r["query"])
        everything.extend(r["passages"])
    everything = everything[: args.bulk_texts]
    t0 = time.perf_counter()
    with torch.inference_mode():
        model.encode(everything, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    bulk_s = time.perf_counter() - t0

    json.dump(
        {
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "maxSeqLength": model.max_seq_length,
            "perRequest": {
                "requests": len(latencies),
                "textsPerSec": texts / elapsed,
                "p50Ms": percentile(latencies, 50),
                "p99Ms": percentile(latencies, 99),
            },
            "bulk": {"texts": len(everything), "textsPerSec": len(everything) / bulk_s},
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
