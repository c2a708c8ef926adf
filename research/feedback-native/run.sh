#!/usr/bin/env bash
# Builds and runs research/feedback-native/feedback_pass.cc (the feedback centroid cosine in C++ beside
# the shipped extractor; docs/eval.md "Pseudo-relevance feedback"), with the addon's optimisation
# flags and target (baseline x86-64), on a dump of research/loco/feedback-cost.ts --dump.
# Usage: research/feedback-native/run.sh DUMP [rounds] [head]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/feedback-native"
mkdir -p "$out"
src=(native/src/features/case_fold.cc native/src/features/code_point_class.cc native/src/features/corpus_stats.cc
  native/src/features/extractor.cc native/src/features/porter_stemmer.cc native/src/features/stop_words.cc
  native/src/features/terms.cc)
(cd "$root" && g++ -std=c++17 -O3 -Wall -Wextra -Inative/src research/feedback-native/feedback_pass.cc "${src[@]}" \
  -o "$out/feedback_pass")
"$out/feedback_pass" "$@"
