/**
 * The embedding tier on the real all-MiniLM-L6-v2 folder (models/.cache/all-minilm-l6-v2, made by
 * `bash scripts/fetch-reference-models.sh`): `embed` agrees with the scorer's similarity, and on
 * SciFact's test queries the relevant abstracts score above random ones on average. Skipped with a
 * warning when the folder is absent locally; in CI (process.env.CI set) its absence is a failure.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddingScorer, type EmbeddingScorer } from '../../src/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

// RELEVANCE_GATE_MINILM_DIR points the test at another import of the same model.
const MODEL_DIR = process.env.RELEVANCE_GATE_MINILM_DIR ?? join(packageRoot(), 'models', '.cache', 'all-minilm-l6-v2');
const SCIFACT = join(packageRoot(), '..', 'shared', 'data', 'scifact');
const present = existsSync(join(MODEL_DIR, 'relevance-gate-model.json'));

if (!present) {
  const why = `${MODEL_DIR} is absent: run \`bash scripts/fetch-reference-models.sh\``;
  if (process.env.CI) throw new Error(`embedding tier on all-MiniLM-L6-v2: ${why}`);
  console.warn(`embedding tier on all-MiniLM-L6-v2 skipped: ${why}`);
}

function readJsonl(path: string): Array<Record<string, string>> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, string>);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

describe.skipIf(!present)('embedding tier on all-MiniLM-L6-v2', () => {
  let scorer: EmbeddingScorer;

  beforeAll(async () => {
    scorer = await createEmbeddingScorer({ modelDir: MODEL_DIR, workers: 2 });
  });

  afterAll(async () => {
    await scorer?.close();
  });

  it('is the 384-dimension model, and embed agrees with the scorer similarity', async () => {
    expect(scorer.dimensions).toBe(384);
    expect(scorer.info.maxLength).toBe(256);
    const query = 'A deficiency of vitamin B12 increases blood levels of homocysteine.';
    const passages = [
      'Vitamin B12 deficiency leads to elevated plasma homocysteine concentrations.',
      'The stock market fell sharply on Monday.',
      'Homocysteine',
    ];
    const [q, ...ps] = await scorer.embed([query, ...passages]);
    for (const v of [q, ...ps]) expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-5);
    const results = await scorer.score(
      query,
      passages.map((text, i) => ({ id: String(i), text })),
    );
    results.forEach((r, i) => {
      expect(r.raw!.similarity).toBeCloseTo(dot(q, ps[i]), 5);
    });
    expect(results[0].raw!.similarity).toBeGreaterThan(0.5);
    expect(results[0].raw!.similarity).toBeGreaterThan(results[1].raw!.similarity + 0.3);
  });

  it('scores relevant SciFact abstracts above random ones on average (test queries)', async () => {
    const docs = new Map(readJsonl(join(SCIFACT, 'docs.jsonl')).map((d) => [d.id, d]));
    const queries = new Map(readJsonl(join(SCIFACT, 'queries.jsonl')).map((q) => [q.id, q.text]));
    const qrels = new Map<string, string[]>();
    for (const line of readFileSync(join(SCIFACT, 'qrels.tsv'), 'utf8').split('\n').slice(1)) {
      const [qid, did, score] = line.split('\t');
      if (qid && did && Number(score) > 0) qrels.set(qid, [...(qrels.get(qid) ?? []), did]);
    }
    const ids = [...docs.keys()];
    const random = mulberry32(11);
    const relevant: number[] = [];
    const others: number[] = [];
    const relevantP: number[] = [];
    const othersP: number[] = [];
    // 16 queries, their relevant abstracts and 3 random ones each, scored concurrently (as a server's
    // callers would: the batcher shares batches across the calls).
    const calls = [...qrels].slice(0, 16).map(([qid, rel]) => {
      const picks = Array.from({ length: 3 }, () => ids[Math.floor(random() * ids.length)]).filter(
        (id) => !rel.includes(id),
      );
      const passages = [...rel, ...picks].map((id) => {
        const d = docs.get(id)!;
        return { id, text: d.text, title: d.title };
      });
      return { rel, results: scorer.score(queries.get(qid)!, passages) };
    });
    for (const { rel, results } of calls) {
      (await results).forEach((r, i) => {
        (i < rel.length ? relevant : others).push(r.raw!.similarity);
        (i < rel.length ? relevantP : othersP).push(r.probabilities.relevant);
      });
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(relevant)).toBeGreaterThan(mean(others) + 0.2);
    expect(mean(relevantP)).toBeGreaterThan(mean(othersP));
  });
});
