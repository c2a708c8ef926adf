#!/usr/bin/env bash
# Builds the bench-only tree-peer C helpers (not part of npm install; nothing at run time uses them):
#   build/tree-peers-c/lightgbm_bench  LightGBM C API, linked against the PyPI wheel's lib_lightgbm.so
#   build/tree-peers-c/tl2cgen_bench   calls a TL2cgen-compiled model library (dlopen)
# Needs python/.venv with the trees set: bash python/setup-venv.sh --with-trees
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/tree-peers-c"
lgbm_lib="${LIGHTGBM_LIB:-$(ls -d "$root"/python/.venv/lib/python3*/site-packages/lightgbm/lib | head -n 1)}"
if [ ! -f "$lgbm_lib/lib_lightgbm.so" ]; then
  echo "lib_lightgbm.so not found under $lgbm_lib: bash python/setup-venv.sh --with-trees (or set LIGHTGBM_LIB)" >&2
  exit 1
fi
mkdir -p "$out"
g++ -std=c++17 -O2 -o "$out/lightgbm_bench" "$root/bench/tree-peers-c/lightgbm_bench.cc" \
  -L"$lgbm_lib" -l:lib_lightgbm.so -Wl,-rpath,"$lgbm_lib"
g++ -std=c++17 -O2 -o "$out/tl2cgen_bench" "$root/bench/tree-peers-c/tl2cgen_bench.cc" -ldl
echo "$out/lightgbm_bench"
echo "$out/tl2cgen_bench"
