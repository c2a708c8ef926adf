#!/usr/bin/env bash
# The seed scenario with default settings (no tuning flag): the cascade router (fast path → the
# TinyBERT-L2-shape cross-encoder) at 1,000 requests/s of 20 BM25 candidates, 100 ms budgets,
# Zipf(1.0) over 5,000 distinct queries, per collection: in-process (`bench`), then through
# `serve` driven over HTTP (`bench --url`). Each run prints its late / unscored / error counts.
#
# Usage: bash bench/seed-scenario.sh [seconds per run, default 60] [collections, default "scifact cranfield"]
# Writes JSON reports to ${OUT:-/tmp/seed-scenario}.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
collections="${2:-scifact cranfield}"
out="${OUT:-/tmp/seed-scenario}"
port="${PORT:-18080}"
ce=models/generated/tinybert-l2
mkdir -p "$out"
[ -f "$ce/onnx/model.onnx" ] || npx tsx scripts/make-models.ts --only tinybert-l2
cli=(node --import tsx src/cli/main.ts)
load=(--k 20 --budget-ms 100 --warmup 5 --qps 1000 --duration "$seconds" --zipf 1.0 --distinct 5000 --no-progress)

for c in $collections; do
  echo "== $c, in-process"
  "${cli[@]}" bench --collection "../shared/data/$c" "${load[@]}" --routing cascade \
    --cross-encoder "$ce" --fast-path models/fast-path-lexical --json "$out/$c-in-process.json"

  echo "== $c, serve + bench --url"
  "${cli[@]}" serve --port "$port" --cross-encoder "$ce" --log-level warn &
  server=$!
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
    sleep 0.1
  done
  "${cli[@]}" bench --collection "../shared/data/$c" "${load[@]}" --url "http://127.0.0.1:$port" \
    --model cascade --json "$out/$c-http.json" || status=$?
  kill -TERM "$server"
  wait "$server" || true
  [ "${status:-0}" -eq 0 ] || exit "$status"
done
