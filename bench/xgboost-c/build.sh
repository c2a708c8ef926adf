#!/usr/bin/env bash
# Builds the bench-only XGBoost C predictor helper (needs Debian's libxgboost-dev 1.7.4:
#   apt-get install -y libxgboost-dev). Not part of npm install; nothing at run time uses it.
#
#   bench/xgboost-c/build.sh                      # Debian's libxgboost 1.7.4 -> build/xgboost-c/predict_bench
#   bench/xgboost-c/build.sh --xgboost-lib DIR    # the same harness against DIR/libxgboost.so, e.g. the
#                                                 # PyPI wheel's (python/.venv/lib/python3.11/site-packages/
#                                                 # xgboost/lib; bash python/setup-venv.sh --with-trees)
#                                                 # -> build/xgboost-c/predict_bench_pypi
# The wheel ships no headers; Debian's c_api.h declares the functions the harness calls
# (XGBoosterCreate/LoadModel/SetParam/PredictFromDense/Free, XGBGetLastError), whose C ABI is the
# same in XGBoost 3.x.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/xgboost-c"
lib_dir=""
if [ "${1:-}" = "--xgboost-lib" ]; then
  lib_dir="$(cd "${2:?--xgboost-lib needs a directory}" && pwd)"
  [ -f "$lib_dir/libxgboost.so" ] || { echo "no libxgboost.so in $lib_dir" >&2; exit 1; }
elif [ -n "${1:-}" ]; then
  echo "build.sh: unknown argument $1" >&2
  exit 2
fi
mkdir -p "$out"
if [ ! -f /usr/include/xgboost/c_api.h ]; then
  echo "xgboost C headers not found: apt-get install -y libxgboost-dev" >&2
  exit 1
fi
if [ -z "$lib_dir" ]; then
  g++ -std=c++17 -O2 -o "$out/predict_bench" "$root/bench/xgboost-c/predict_bench.cc" -lxgboost
  echo "$out/predict_bench"
else
  g++ -std=c++17 -O2 -o "$out/predict_bench_pypi" "$root/bench/xgboost-c/predict_bench.cc" \
    -L"$lib_dir" -l:libxgboost.so -Wl,-rpath,"$lib_dir"
  echo "$out/predict_bench_pypi"
fi
