#!/usr/bin/env bash
# Pairs scored twice across two replicas sharing one Redis, before and after the router planned
# from Redis and leased what it scores (docs/router.md, "Shared work across replicas"). Runs
# bench/replicas-twice.ts twice per mode: with `serve` from the code before that change (a copy of
# the tree at BEFORE_REF, made with git archive; node_modules, the native build and the generated
# models are linked from this checkout), then from this checkout.
#
#   bash bench/replicas-twice.sh [modes, default "mirror balanced"] [qps, default 40] [seconds, default 20]
#
# BEFORE_REF: default the parent of the commit that added src/cache/lease-wait.ts, or HEAD while
# that file is not committed yet. The cross-encoder is models/generated/tinybert-l2
# (npx tsx scripts/make-models.ts --only tinybert-l2). In mirror mode qps goes to each replica,
# in balanced mode through nginx to both.
set -euo pipefail
cd "$(dirname "$0")/.."
modes="${1:-mirror balanced}"
qps="${2:-40}"
seconds="${3:-20}"
added="$(git log --diff-filter=A --format=%H -- src/cache/lease-wait.ts | tail -1)"
ref="${BEFORE_REF:-${added:+$added~1}}"
ref="${ref:-HEAD}"
[ -f models/generated/tinybert-l2/onnx/model.onnx ] || npx tsx scripts/make-models.ts --only tinybert-l2

before="$(mktemp -d -t rg-before-XXXXXX)"
trap 'rm -rf "$before"' EXIT
git archive "$ref" | tar -x -C "$before"
ln -s "$PWD/node_modules" "$before/node_modules"
ln -s "$PWD/build" "$before/build"
rm -rf "$before/models/generated"
ln -s "$PWD/models/generated" "$before/models/generated"
echo "before: $(git rev-parse --short "$ref") ($ref); after: this checkout"

for mode in $modes; do
  nice -n 10 npx tsx bench/replicas-twice.ts --root "$before" --label before --mode "$mode" --qps "$qps" --seconds "$seconds"
  nice -n 10 npx tsx bench/replicas-twice.ts --label after --mode "$mode" --qps "$qps" --seconds "$seconds"
done
