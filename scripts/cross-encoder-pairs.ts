/**
 * Writes the cross-encoder's training pairs (src/tooling/training/cross-encoder-pairs.ts) as JSON
 * lines for python/train_cross_encoder.py: one object per pair, collections in the given order.
 *
 *   npx tsx scripts/cross-encoder-pairs.ts --data ../shared/data --collections cisi,cranfield,med,nfcorpus \
 *     --out models/.cache/training/pairs-no-scifact.jsonl [--positives 4] [--negatives 3] [--pool 30] [--random-negatives 2] [--seed 1]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { buildCrossEncoderPairs } from '../src/tooling/training/cross-encoder-pairs.js';

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
}

const data = arg('data', '../shared/data');
const out = arg('out');
const options = {
  positives: Number(arg('positives', '4')),
  negatives: Number(arg('negatives', '3')),
  negativePool: Number(arg('pool', '30')),
  randomNegatives: Number(arg('random-negatives', '2')),
  seed: Number(arg('seed', '1')),
};
const lines: string[] = [];
for (const name of arg('collections').split(',')) {
  const pairs = buildCrossEncoderPairs(loadCollection(join(data, name)), options);
  const positives = pairs.filter((p) => p.relevant === 1).length;
  process.stderr.write(`${name}: ${pairs.length} pairs (${positives} relevant)\n`);
  for (const p of pairs) lines.push(JSON.stringify(p));
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${lines.join('\n')}\n`);
process.stderr.write(`${lines.length} pairs → ${out}\n`);
