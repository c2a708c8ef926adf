/**
 * Carries a cross-encoder folder's operating points to a variant whose `relevant` column is the
 * same model (the signals variant of scripts/train-signal-heads.sh: the shipped encoder and
 * relevance head, further heads beside them): checks, through the engine, that the two folders
 * give the same `relevant` logits on real pairs, then writes the source's operating-points.json
 * into the variant, fitted-for id rewritten to the variant's. Refuses when the logits differ.
 *
 *   npx tsx scripts/carry-operating-points.ts <source dir> <variant dir> <lists.jsonl> [tolerance=1e-3]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATING_POINTS_FILE } from '../src/operating-points/file.js';
import { modelIdOf } from '../src/operating-points/types.js';
import { createCrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';

const [source, variant, listsPath, toleranceArg = '1e-3'] = process.argv.slice(2);
if (source === undefined || variant === undefined || listsPath === undefined)
  throw new Error('usage: carry-operating-points.ts <source dir> <variant dir> <lists.jsonl> [tolerance]');
const tolerance = Number(toleranceArg);
const lists = readFileSync(listsPath, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .slice(0, 40)
  .map((line) => JSON.parse(line) as { query: string; docs: { text: string }[] });

const [a, b] = await Promise.all([createCrossEncoder({ modelDir: source }), createCrossEncoder({ modelDir: variant })]);
let maxDiff = 0;
let pairs = 0;
try {
  for (const list of lists) {
    const passages = list.docs.slice(0, 20).map((d) => d.text);
    const [ra, rb] = await Promise.all([a.score(list.query, passages), b.score(list.query, passages)]);
    for (let i = 0; i < passages.length; i++) maxDiff = Math.max(maxDiff, Math.abs(ra.logits[i] - rb.logits[i]));
    pairs += passages.length;
  }
} finally {
  await Promise.all([a.close(), b.close()]);
}
console.log(`relevant logits over ${pairs} pairs: max |difference| ${maxDiff.toExponential(2)}`);
if (!(maxDiff <= tolerance)) throw new Error(`the variant's relevant logits differ by more than ${tolerance}`);
const file = JSON.parse(readFileSync(join(source, OPERATING_POINTS_FILE), 'utf8')) as { model: string };
file.model = modelIdOf(b.info.id);
writeFileSync(join(variant, OPERATING_POINTS_FILE), `${JSON.stringify(file, null, 2)}\n`);
console.log(`${OPERATING_POINTS_FILE} carried to ${variant} (model ${file.model})`);
