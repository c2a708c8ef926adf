#!/usr/bin/env bash
# Builds and runs research/lsi-native/fold_in.cc (the latent cosine's per-pair work in C++; docs/eval.md
# "Latent semantics from the corpus") with the addon's optimisation flags and target (baseline x86-64),
# on a dump of research/loco/lsi-cost.ts --dump. Also builds it under ASan/UBSan and runs that once.
# Usage: research/lsi-native/run.sh DUMP [rounds]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/lsi-native"
mkdir -p "$out"
g++ -std=c++17 -O3 -Wall -Wextra -Werror "$root/research/lsi-native/fold_in.cc" -o "$out/fold_in"
g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra \
  "$root/research/lsi-native/fold_in.cc" -o "$out/fold_in_checked"
"$out/fold_in_checked" "$1" 1 > /dev/null
"$out/fold_in" "$@"
