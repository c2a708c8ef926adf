#!/usr/bin/env bash
# Native safety checks for the tree evaluator (docs/trees-evaluator.md records the results) and the
# lexical feature extractor (step 4):
#  1. dumps every XGBoost parity fixture to a flat file (scripts/trees-dump-fixtures.ts);
#  2. builds native/test/trees_test.cc with the evaluator core under
#     -fsanitize=address,undefined and runs fixture parity (all kernels, both layouts, several
#     batch sizes) and the hostile-input suite (corrupted models, images modified after
#     validation, corrupted image headers);
#  3. with --valgrind, also runs the built addon under valgrind on every fixture
#     (scripts/trees-valgrind-smoke.mjs; valgrind has no AVX-512, so the addon picks AVX2 there);
#  4. builds native/test/features_test.cc with the feature extractor under ASan+UBSan and runs it
#     (and, with --valgrind, a plain build under valgrind).
# Usage: scripts/native-sanitize.sh [--valgrind]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/build/trees-test"
mkdir -p "$out/dumps"
npx tsx scripts/trees-dump-fixtures.ts "$out/dumps" >/dev/null
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
g++ -std=c++17 -O1 -g -march=x86-64-v2 -Wall -Wextra "${san[@]}" -Inative/src \
  native/test/trees_test.cc native/src/trees/tree_eval.cc native/src/trees/tree_kernels.cc \
  -o "$out/trees_test_asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== parity under ASan+UBSan"
"$out/trees_test_asan" parity "$out"/dumps/*.rgtd
echo "== hostile inputs under ASan+UBSan"
"$out/trees_test_asan" hostile "$out"/dumps/*.rgtd
for kernel in scalar avx2; do
  echo "== parity under ASan+UBSan, RG_TREES_KERNEL=$kernel for kAuto"
  RG_TREES_KERNEL=$kernel "$out/trees_test_asan" parity "$out"/dumps/logistic_t500_d6.rgtd "$out"/dumps/softprob3_t40_d4.rgtd | tail -1
done
# The lexical feature extractor (native/test/features_test.cc): the window tokenizer against the
# general tokenizer on random texts held in exactly-sized heap buffers, and extraction on random
# pairs.
fout="$root/build/features-test"
mkdir -p "$fout"
fsrc=(native/test/features_test.cc native/src/features/text.cc native/src/features/extractor.cc
  native/src/features/corpus_stats.cc)
g++ -std=c++17 -O1 -g -march=x86-64-v2 -Wall -Wextra "${san[@]}" -Inative/src "${fsrc[@]}" \
  -o "$fout/features_test_asan"
echo "== feature extractor under ASan+UBSan"
"$fout/features_test_asan" 3000
if [ "${1:-}" = "--valgrind" ]; then
  g++ -std=c++17 -O2 -g -march=x86-64-v2 -Wall -Wextra -Inative/src "${fsrc[@]}" -o "$fout/features_test"
  echo "== feature extractor under valgrind"
  valgrind --error-exitcode=1 --errors-for-leak-kinds=definite --leak-check=full "$fout/features_test" 300
fi
if [ "${1:-}" = "--valgrind" ]; then
  if [ ! -f build/Release/relevance_gate.node ]; then
    echo "build the addon first (npx node-gyp rebuild)" >&2
    exit 1
  fi
  echo "== addon under valgrind"
  valgrind --error-exitcode=1 --errors-for-leak-kinds=definite --leak-check=full --suppressions=/dev/null \
    node scripts/trees-valgrind-smoke.mjs "$out"/dumps/*.rgtd
fi
echo "native-sanitize: all checks passed"
