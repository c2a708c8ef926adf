/**
 * A seeded sample of the junk lists where the held-out `balanced` point kept something, printed for
 * reading: the foreign query and the passage the gate put first. Input: the JSON of
 * `relevance-gate fit-points --json F` (its `junkKeptHeldOut` per collection).
 *
 *   npx tsx research/sufficiency/junk-kept-sample.ts F [--per 10] [--seed 7] [--data ../shared/data]
 *
 * Prints, per (corpus, source collection) pair with kept lists, `--per` lists: the query, and the
 * first kept passage's id, title and first 400 characters.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1]! : fallback;
}
const file = process.argv[2];
if (file === undefined || file.startsWith('--')) throw new Error('give the fit-points JSON file');
const per = Number(arg('per', '10'));
let seed = Number(arg('seed', '7'));
const dataDir = arg('data', '../shared/data');

interface JunkKept {
  source: string;
  queryId: string;
  kept: string[];
}
interface Fit {
  collections: Array<{ collection: string; junkLists: number; junkKeptHeldOut: JunkKept[] }>;
}
const fit = JSON.parse(readFileSync(file, 'utf8')) as Fit;

function jsonl(path: string): Map<string, { text: string; title?: string }> {
  const out = new Map<string, { text: string; title?: string }>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const row = JSON.parse(line) as { id: string; text: string; title?: string };
    out.set(String(row.id), row);
  }
  return out;
}
// Park–Miller: the same sample on every run with the same seed.
const random = (): number => {
  seed = (seed * 48271) % 2147483647;
  return seed / 2147483647;
};

for (const c of fit.collections) {
  if (c.junkKeptHeldOut.length === 0) continue;
  const docs = jsonl(join(dataDir, c.collection, 'docs.jsonl'));
  const bySource = new Map<string, JunkKept[]>();
  for (const j of c.junkKeptHeldOut) bySource.set(j.source, [...(bySource.get(j.source) ?? []), j]);
  for (const [source, lists] of [...bySource].sort()) {
    const queries = jsonl(join(dataDir, source, 'queries.jsonl'));
    const pool = [...lists];
    const sample: JunkKept[] = [];
    while (sample.length < per && pool.length > 0) sample.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
    console.log(`\n## corpus ${c.collection}, queries of ${source}: ${lists.length} lists kept something; ${sample.length} sampled\n`);
    for (const j of sample) {
      const doc = docs.get(j.kept[0]!);
      const text = `${doc?.title ? `${doc.title}. ` : ''}${doc?.text ?? '(missing)'}`.replace(/\s+/g, ' ');
      console.log(`- query ${source}/${j.queryId}: ${queries.get(j.queryId)?.text ?? '(missing)'}`);
      console.log(`  kept ${j.kept.length}; first ${c.collection}/${j.kept[0]}: ${text.slice(0, 400)}`);
    }
  }
}
