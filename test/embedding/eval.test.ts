/**
 * The embedding tier in the evaluation tooling, on the tiny random-weight bi-encoder and the med
 * collection: corpus vectors computed once and read back from their cache file, dense retrieval as
 * the first stage, reranking BM25's list with precomputed vectors (no model run), and the
 * calibration fit of fit-points.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCollection, type Collection } from '../../src/tooling/eval/collection.js';
import { calibrationPairs, fitEmbeddingCalibration, loadEmbeddingEval } from '../../src/tooling/eval/embedding-tier.js';
import { judgedQueryIds } from '../../src/tooling/eval/collection.js';
import { runEval } from '../../src/tooling/eval/run-eval.js';
import { writeTinyBiEncoderDir } from './tiny-bi-encoder.js';

let root: string;
let model: string;
let collection: Collection;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'rg-emb-eval-'));
  model = writeTinyBiEncoderDir(join(root, 'tiny'), { dims: 24 });
  collection = loadCollection(join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'med'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('eval --tier embedding', () => {
  it('embeds the corpus once, then reads it from the cache file; --dense retrieves by cosine', async () => {
    const cacheDir = join(root, 'cache');
    const first = await loadEmbeddingEval({ model, collection, dense: true, cacheDir });
    try {
      expect(first.corpus.fromCache).toBe(false);
      expect(first.corpus.file).not.toBeNull();
      expect(existsSync(first.corpus.file as string)).toBe(true);
      expect(first.corpus.ids.length).toBe(collection.docs.length);
      // Dense search is exact: the top document's vector has the highest dot product with the query's.
      const q = collection.queries[0];
      const top = first.firstStage!.search(q.text, 5);
      expect(top.map((c) => c.rank)).toEqual([1, 2, 3, 4, 5]);
      for (let i = 1; i < top.length; i++) expect(top[i - 1].score).toBeGreaterThanOrEqual(top[i].score);
      const report = await runEval({
        collection,
        scorer: first.scorer,
        queryIds: judgedQueryIds(collection.qrels).slice(0, 10),
        k: 20,
        gateK: 10,
        firstStage: first.firstStage,
      });
      expect(report.firstStage.kind).toBe('dense');
      // The reranked order is the tier's own order: the same nDCG.
      expect(report.ndcg10.reranked).toBeCloseTo(report.ndcg10.firstStage as number, 9);
    } finally {
      await first.embedder.close();
    }
    const second = await loadEmbeddingEval({ model, collection, cacheDir });
    try {
      expect(second.corpus.fromCache).toBe(true);
      expect(Array.from(second.corpus.matrix.subarray(0, 24))).toEqual(Array.from(first.corpus.matrix.subarray(0, 24)));
      expect(second.firstStage).toBeUndefined();
      const report = await runEval({
        collection,
        scorer: second.scorer,
        queryIds: judgedQueryIds(collection.qrels).slice(0, 10),
        k: 20,
        gateK: 10,
      });
      expect(report.firstStage.kind).toBe('bm25');
      // Every vector came precomputed: the model ran for nothing but the queries at load.
      expect(second.embedder.stats().pairsRun).toBe(new Set(collection.queries.map((q) => q.text)).size);
    } finally {
      await second.embedder.close();
    }
  });

  it('fits the calibration over the cosine on the judged BM25 top gateK', async () => {
    const loaded = await loadEmbeddingEval({ model, collection, cacheDir: join(root, 'cache') });
    try {
      const pairs = await calibrationPairs(collection, loaded.scorer, judgedQueryIds(collection.qrels), 10);
      expect(pairs.cosines.length).toBe(pairs.labels.length);
      expect(pairs.cosines.length).toBeGreaterThan(100);
      const fit = fitEmbeddingCalibration([pairs], 10);
      expect(fit.pairs).toBe(pairs.cosines.length);
      expect(Number.isFinite(fit.calibration.a) && Number.isFinite(fit.calibration.b)).toBe(true);
    } finally {
      await loaded.embedder.close();
    }
  });
});
