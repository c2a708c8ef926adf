#!/usr/bin/env bash
# Native safety checks for the tree evaluator (docs/trees-evaluator.md records the results) and the
# lexical feature extractor (docs/features.md):
#  1. dumps every XGBoost parity fixture to a flat file (scripts/trees-dump-fixtures.ts);
#  2. builds native/test/trees_test.cc with the evaluator core under
#     -fsanitize=address,undefined and runs fixture parity (all kernels, both layouts, several
#     batch sizes) and the hostile-input suite (corrupted models, images modified after
#     validation, corrupted image headers);
#  3. with --valgrind, also runs the built addon under valgrind on every fixture
#     (scripts/trees-valgrind-smoke.mjs; valgrind has no AVX-512, so the addon picks AVX2 there);
#  4. builds native/test/features_test.cc with the feature extractor under ASan+UBSan and runs it,
#     once as shipped and once with the SSE2 code paths compiled out (-U__SSE2__: the portable
#     code other architectures build), and, with --valgrind, a plain build under valgrind;
#  5. with --arm64 (needs aarch64-linux-gnu-g++; qemu-aarch64-static to run the tests), compiles
#     every addon source for arm64 and runs both test drivers there.
# Everything is built for baseline x86-64 (SSE2 only), like the shipped addon: code that needs
# more (AVX2, AVX-512, POPCNT) carries its own target attribute and is chosen at run time.
# Usage: scripts/native-sanitize.sh [--valgrind] [--arm64]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
valgrind=0
arm64=0
for arg in "$@"; do
  case "$arg" in
    --valgrind) valgrind=1 ;;
    --arm64) arm64=1 ;;
    *)
      echo "usage: scripts/native-sanitize.sh [--valgrind] [--arm64]" >&2
      exit 2
      ;;
  esac
done
out="$root/build/trees-test"
mkdir -p "$out/dumps"
npx tsx scripts/trees-dump-fixtures.ts "$out/dumps" >/dev/null
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
tsrc=(native/test/trees_test.cc native/src/trees/tree_eval.cc native/src/trees/tree_kernels.cc)
g++ -std=c++17 -O1 -g -Wall -Wextra "${san[@]}" -Inative/src "${tsrc[@]}" -o "$out/trees_test_asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== parity under ASan+UBSan"
"$out/trees_test_asan" parity "$out"/dumps/*.rgtd
echo "== hostile inputs under ASan+UBSan"
"$out/trees_test_asan" hostile "$out"/dumps/*.rgtd
g++ -std=c++17 -O1 -g -Wall -Wextra "${san[@]}" -Inative/src native/test/trees_generic64_test.cc \
  native/src/trees/tree_eval.cc native/src/trees/tree_kernels.cc -o "$out/trees_generic64_asan"
echo "== perfect64 and generic64 layouts (LightGBM float64 leaves, +inf clamp) under ASan+UBSan"
"$out/trees_generic64_asan"
for kernel in scalar avx2; do
  echo "== parity under ASan+UBSan, RG_TREES_KERNEL=$kernel for kAuto"
  RG_TREES_KERNEL=$kernel "$out/trees_test_asan" parity "$out"/dumps/logistic_t500_d6.rgtd "$out"/dumps/softprob3_t40_d4.rgtd | tail -1
done
# The lexical feature extractor (native/test/features_test.cc): the window tokenizer against the
# general tokenizer on random texts held in exactly-sized heap buffers, and extraction on random
# pairs. Every source of the extractor but its N-API binding.
fout="$root/build/features-test"
mkdir -p "$fout"
fsrc=(native/test/features_test.cc)
for f in native/src/features/*.cc; do
  [ "$f" = native/src/features/features_binding.cc ] || fsrc+=("$f")
done
g++ -std=c++17 -O1 -g -Wall -Wextra "${san[@]}" -Inative/src "${fsrc[@]}" -o "$fout/features_test_asan"
echo "== feature extractor under ASan+UBSan"
"$fout/features_test_asan" 3000
g++ -std=c++17 -O1 -g -Wall -Wextra -U__SSE2__ "${san[@]}" -Inative/src "${fsrc[@]}" -o "$fout/features_test_portable_asan"
echo "== feature extractor without its SSE2 paths (-U__SSE2__) under ASan+UBSan"
"$fout/features_test_portable_asan" 1000
if [ "$valgrind" = 1 ]; then
  g++ -std=c++17 -O2 -g -Wall -Wextra -Inative/src "${fsrc[@]}" -o "$fout/features_test"
  echo "== feature extractor under valgrind"
  valgrind --error-exitcode=1 --errors-for-leak-kinds=definite --leak-check=full "$fout/features_test" 300
  if [ ! -f build/Release/relevance_gate.node ]; then
    echo "build the addon first (npx node-gyp rebuild)" >&2
    exit 1
  fi
  echo "== addon under valgrind"
  valgrind --error-exitcode=1 --errors-for-leak-kinds=definite --leak-check=full --suppressions=/dev/null \
    node scripts/trees-valgrind-smoke.mjs "$out"/dumps/*.rgtd
fi
if [ "$arm64" = 1 ]; then
  cxx=aarch64-linux-gnu-g++
  if ! command -v "$cxx" >/dev/null; then
    echo "--arm64 needs $cxx (Debian: apt-get install g++-aarch64-linux-gnu)" >&2
    exit 1
  fi
  aout="$root/build/arm64-test"
  mkdir -p "$aout"
  napi_inc="$(node -p "require('node-addon-api').include_dir")"
  echo "== every addon source compiles for arm64"
  node -e "console.log(JSON.parse(require('fs').readFileSync('binding.gyp', 'utf8')).targets[0].sources.join('\n'))" \
    >"$aout/sources.txt"
  while read -r src; do
    "$cxx" -std=c++17 -O2 -Wall -Wextra -Wno-unused-parameter -fexceptions -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS \
      -Inative/src -I"$napi_inc" -I/usr/include/node -fsyntax-only "$src"
  done <"$aout/sources.txt"
  "$cxx" -std=c++17 -O2 -static -Wall -Wextra -Inative/src "${tsrc[@]}" -o "$aout/trees_test"
  "$cxx" -std=c++17 -O2 -static -Wall -Wextra -Inative/src "${fsrc[@]}" -o "$aout/features_test"
  if command -v qemu-aarch64-static >/dev/null; then
    echo "== tree evaluator on arm64 (qemu): parity and hostile inputs"
    qemu-aarch64-static "$aout/trees_test" parity "$out"/dumps/*.rgtd | tail -1
    qemu-aarch64-static "$aout/trees_test" hostile "$out"/dumps/*.rgtd | tail -1
    echo "== feature extractor on arm64 (qemu)"
    qemu-aarch64-static "$aout/features_test" 1000
  else
    echo "(qemu-aarch64-static not found: arm64 test drivers built, not run)"
  fi
fi
echo "native-sanitize: all checks passed"
