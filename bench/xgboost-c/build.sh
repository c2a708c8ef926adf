#!/usr/bin/env bash
# Builds the bench-only XGBoost C predictor helper (needs Debian's libxgboost-dev 1.7.4:
#   apt-get install -y libxgboost-dev). Not part of npm install; nothing at run time uses it.
# Output: build/xgboost-c/predict_bench
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/xgboost-c"
mkdir -p "$out"
if [ ! -f /usr/include/xgboost/c_api.h ]; then
  echo "xgboost C headers not found: apt-get install -y libxgboost-dev" >&2
  exit 1
fi
g++ -std=c++17 -O2 -o "$out/predict_bench" "$root/bench/xgboost-c/predict_bench.cc" -lxgboost
echo "$out/predict_bench"
