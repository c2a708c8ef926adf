#!/usr/bin/env bash
# The decision log's cost on the request path (issue 41's acceptance): the seed workload through
# `serve` driven over HTTP (`bench --url`), side by side without and with `--decision-log` at 100 %
# sampling, alternating off/on RUNS times so drift of the host hits both alike. Prints each run's
# p99 and, for the logged runs, the log's size per 1,000 requests. The acceptance: p99 with the
# log within 5 % (or 1 ms) of p99 without it.
#
# Usage: bash bench/decision-log-overhead.sh [seconds per run, default 30] [collection, default scifact]
# Env: RUNS (pairs of runs, default 2), QPS (default 1000), OUT (default /tmp/decision-log-overhead),
#      PORT (default 18080). Uses the seed's cascade over the generated TinyBERT-L2-shape
#      cross-encoder when models/generated/tinybert-l2 exists, else the fast path alone.
#      SHADOW=<model>: also a third run per round with that configured model (e.g. cross-encoder)
#      shadowing the served one at 10 % (`--shadow`), logged; the same bound applies to it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
collection="${2:-scifact}"
runs="${RUNS:-2}"
qps="${QPS:-1000}"
out="${OUT:-/tmp/decision-log-overhead}"
port="${PORT:-18080}"
ce=models/generated/tinybert-l2
cli=(node --import tsx src/cli/main.ts)
load=(--k 20 --budget-ms 100 --warmup 5 --qps "$qps" --duration "$seconds" --zipf 1.0 --distinct 5000 --no-progress)
serve_model=()
model=fast-path
if [ -f "$ce/onnx/model.onnx" ]; then
  serve_model=(--cross-encoder "$ce")
  model=cascade
fi
rm -rf "$out"
mkdir -p "$out"

run_one() { # $1 = label, rest = extra serve flags
  local label="$1"
  shift
  "${cli[@]}" serve --port "$port" "${serve_model[@]}" --default-model "$model" --log-level warn "$@" &
  local server=$!
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
    sleep 0.1
  done
  "${cli[@]}" bench --collection "../shared/data/$collection" "${load[@]}" --url "http://127.0.0.1:$port" \
    --model "$model" --json "$out/$label.json" >"$out/$label.txt" || true
  kill -TERM "$server"
  wait "$server" || true
}

modes="off on"
for i in $(seq 1 "$runs"); do
  run_one "off-$i"
  run_one "on-$i" --decision-log "$out/log-$i" --decision-log-sample 1
  if [ -n "${SHADOW:-}" ]; then
    modes="off on shadow"
    run_one "shadow-$i" --decision-log "$out/shadow-log-$i" --decision-log-sample 1 --shadow "$SHADOW" --shadow-sample 0.1
  fi
done

node -e '
  const fs = require("node:fs");
  const path = require("node:path");
  const out = process.argv[1];
  const runs = Number(process.argv[2]);
  const modes = process.argv[3].split(" ");
  // The measured phase of a bench report: the first object with latencyMs.p99 and requests.
  const point = (value) => {
    if (value && typeof value === "object") {
      if (value.latencyMs && typeof value.latencyMs.p99 === "number" && typeof value.requests === "number") return value;
      for (const v of Object.values(value)) { const p = point(v); if (p) return p; }
    }
    return undefined;
  };
  const size = (dir) => fs.existsSync(dir) ? fs.readdirSync(dir).reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0) : 0;
  const rows = [];
  for (let i = 1; i <= runs; i++) {
    for (const mode of modes) {
      const p = point(JSON.parse(fs.readFileSync(path.join(out, `${mode}-${i}.json`), "utf8")));
      const dir = mode === "on" ? `log-${i}` : mode === "shadow" ? `shadow-log-${i}` : undefined;
      const bytes = dir === undefined ? 0 : size(path.join(out, dir));
      rows.push({ mode, run: i, requests: p.requests, p50: p.latencyMs.p50, p99: p.latencyMs.p99, logBytesPer1000: dir === undefined ? null : Math.round((bytes / p.requests) * 1000) });
    }
  }
  console.table(rows);
  const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  const off = med(rows.filter((r) => r.mode === "off").map((r) => r.p99));
  const bound = Math.max(off * 0.05, 1);
  for (const mode of modes.filter((m) => m !== "off")) {
    const p99 = med(rows.filter((r) => r.mode === mode).map((r) => r.p99));
    console.log(`p99 off ${off} ms, ${mode} ${p99} ms: ${p99 - off <= bound ? "within" : "OUTSIDE"} the bound (5 % or 1 ms = ${bound.toFixed(2)} ms)`);
  }
' "$out" "$runs" "$modes"
