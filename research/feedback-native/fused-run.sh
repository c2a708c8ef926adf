#!/usr/bin/env bash
# Builds the lexical-v2 candidate (research/feedback-native/fused.patch: the list-feedback columns fused
# into the extractor) in a temporary copy of the repository and runs research/feedback-native/fused-cost.ts
# there; the checkout itself is not touched. --head N rebuilds with N head terms per passage (default 48).
# The patch is against the tree of the commit that added it (git log -- research/feedback-native/fused.patch):
# if a later extractor change makes it fail to apply, measure on that commit.
# Usage: research/feedback-native/fused-run.sh [--collection cisi] [--k 100] [--head 48] [--rounds 7]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
head=48
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "--head" ] && head="${args[$((i + 1))]}"; done
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
(cd "$root" && cp -r package.json tsconfig.json binding.gyp native src scripts bench "$copy/")
ln -s "$root/node_modules" "$copy/node_modules"
cd "$copy"
patch -s -p1 <research/feedback-native/fused.patch
sed -i "s/kFeedbackHeadTerms = 48;/kFeedbackHeadTerms = ${head};/" native/src/features/extractor.h
npx node-gyp rebuild -j 2 >build.log 2>&1 || { cat build.log >&2; exit 1; }
npx tsx research/feedback-native/fused-cost.ts --data "$root/../shared/data" "$@"
