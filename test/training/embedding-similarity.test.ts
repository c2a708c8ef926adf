/**
 * The fast path with an embedding feature: `trainFastPath({ embeddingSimilarity })` gives the trees
 * `embedding_similarity` (with its own dropout), the eval wrapper feeds it at scoring time, and the
 * similarity source computes cosines of a bi-encoder's vectors (the tiny test model here; the
 * measured gains with all-MiniLM-L6-v2 are in docs/embedding.md).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { FEATURE_NAMES } from '../../src/features/schema.js';
import { createEmbeddingScorer } from '../../src/tiers/embedding/index.js';
import { readTreeModelIR } from '../../src/tiers/fast-path/load-tree-model.js';
import { type Collection, docPassage, loadCollection } from '../../src/tooling/eval/collection.js';
import {
  createEmbeddingSimilarities,
  type SimilarityOf,
  withEmbeddingSimilarity,
} from '../../src/tooling/eval/embedding-similarity.js';
import { trainFastPath } from '../../src/tooling/training/train-fast-path.js';
import { createXGBoostBackend } from '../../src/tooling/training/xgboost-backend.js';
import type { Passage, Scorer, ScoreOptions } from '../../src/types.js';
import { writeTinyBiEncoderDir } from '../embedding/tiny-bi-encoder.js';

const MED = join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'med');
const EMBEDDING_COLUMN = FEATURE_NAMES.indexOf('embedding_similarity');

/** A similarity that knows the labels: 0.9 for a judged-relevant document, 0.1 otherwise. */
function oracleSimilarity(collection: Collection): SimilarityOf {
  const byText = new Map(collection.queries.map((q) => [q.text, q.id]));
  return (query, docId) => {
    const qid = byText.get(query);
    const grade = qid === undefined ? undefined : collection.qrels.get(qid)?.get(docId);
    return grade !== undefined && grade > 0 ? 0.9 : 0.1;
  };
}

function train(similarity?: (c: Collection) => Promise<SimilarityOf>) {
  return trainFastPath(
    {
      collectionDirs: [MED],
      seed: 3,
      k: 30,
      gateK: 10,
      targetPrecision: 0.5,
      grid: [{ objective: 'binary:logistic', maxDepth: 2, eta: 0.3, rounds: 6, minChildWeight: 1 }],
      retrievalRankDropout: 0.5,
      minQueriesPerCollection: 0,
      maxQueriesPerSplit: 8,
      ...(similarity === undefined ? {} : { embeddingSimilarity: similarity }),
    },
    {
      featurizerFor: async (c) => new LexicalFeaturizer(await buildCorpusStats(c.docs)),
      backend: createXGBoostBackend(),
    },
  );
}

async function splitFeatures(modelBytes: Uint8Array): Promise<Set<number>> {
  const { ir } = await readTreeModelIR(modelBytes);
  const used = new Set<number>();
  for (const tree of ir.trees)
    tree.splitIndex.forEach((f, node) => {
      if (tree.left[node] !== -1) used.add(f);
    });
  return used;
}

describe('trainFastPath with embedding_similarity', () => {
  it('the trees split on the similarity when it is given, never when it is not', async () => {
    const withSimilarity = await train(async (c) => oracleSimilarity(c));
    const without = await train();
    expect(await splitFeatures(withSimilarity.modelBytes)).toContain(EMBEDDING_COLUMN);
    expect(await splitFeatures(without.modelBytes)).not.toContain(EMBEDDING_COLUMN);
    // The labels leak through the oracle: validation ranking is better with it.
    expect(withSimilarity.chosen.macroNdcg10).toBeGreaterThan(without.chosen.macroNdcg10);
  }, 60_000);

  it('refuses an embedding dropout outside [0, 1]', async () => {
    await expect(
      trainFastPath(
        {
          collectionDirs: [MED],
          seed: 1,
          k: 10,
          gateK: 5,
          targetPrecision: 0.5,
          grid: [],
          retrievalRankDropout: 0.5,
          embeddingDropout: 1.5,
          minQueriesPerCollection: 0,
        },
        { featurizerFor: async () => Promise.reject(new Error('not reached')), backend: createXGBoostBackend() },
      ),
    ).rejects.toThrow(/embeddingDropout/);
  });
});

describe('withEmbeddingSimilarity (eval feeds the feature)', () => {
  it('adds the cosine to each passage, keeps its other features, and leaves unknown documents alone', async () => {
    const seen: Passage[][] = [];
    const inner: Scorer = {
      id: 'inner',
      signals: ['relevant'],
      async score(_query: string, passages: readonly Passage[], _options?: ScoreOptions) {
        seen.push([...passages]);
        return passages.map(() => ({ relevant: 0.5 }));
      },
    };
    const prepared: string[] = [];
    const wrapped = withEmbeddingSimilarity(
      inner,
      (query, docId) => (docId === 'unknown' ? undefined : query.length / 100 + Number(docId) / 10),
      async (text) => {
        prepared.push(text);
      },
    );
    expect(wrapped.id).toBe('inner');
    expect(wrapped.signals).toEqual(['relevant']);
    await wrapped.score('four', [
      { id: '1', text: 'a', features: { retrieval_rank: 1 } },
      { id: '2', text: 'b' },
      { id: 'unknown', text: 'c', features: { retrieval_rank: 3 } },
    ]);
    expect(prepared).toEqual(['four']);
    expect(seen[0]!.map((p) => p.features)).toEqual([
      { retrieval_rank: 1, embedding_similarity: 0.04 + 0.1 },
      { embedding_similarity: 0.04 + 0.2 },
      { retrieval_rank: 3 },
    ]);
  });
});

describe('createEmbeddingSimilarities (tiny bi-encoder)', () => {
  let dir: string;
  let collection: Collection;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rg-emb-sim-'));
    const data = join(dir, 'tiny');
    const model = join(dir, 'model');
    writeTinyBiEncoderDir(model);
    // A three-document collection in the ../shared/data layout.
    mkdirSync(data);
    writeFileSync(
      join(data, 'docs.jsonl'),
      [
        { id: 'd1', title: 'wings', text: 'flutter of swept wings at supersonic speed' },
        { id: 'd2', title: '', text: 'blood pressure in older patients' },
        { id: 'd3', title: 'heat', text: 'heat transfer in a boundary layer' },
      ]
        .map((d) => JSON.stringify(d))
        .join('\n'),
    );
    writeFileSync(join(data, 'queries.jsonl'), `${JSON.stringify({ id: 'q1', text: 'wing flutter' })}\n`);
    writeFileSync(join(data, 'qrels.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t1\n');
    collection = loadCollection(data);
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the dot product of the model's own query and passage vectors", async () => {
    const modelDir = join(dir, 'model');
    const similarities = await createEmbeddingSimilarities(modelDir, { cacheDir: join(dir, 'cache') });
    const embedder = await createEmbeddingScorer({ modelDir });
    try {
      const of = await similarities.forCollection(collection);
      const [q] = await embedder.embed(['wing flutter'], { as: 'query' });
      const docs = await embedder.embed(collection.docs.map(docPassage), { as: 'passage' });
      collection.docs.forEach((d, i) => {
        let dot = 0;
        for (let k = 0; k < q!.length; k++) dot += q![k]! * docs[i]![k]!;
        expect(of('wing flutter', d.id)).toBeCloseTo(dot, 5);
      });
      expect(of('wing flutter', 'no such document')).toBeUndefined();
      // Another collection's query has no cosine until it is embedded.
      expect(of('blood pressure', 'd2')).toBeUndefined();
      await similarities.prepareQuery('blood pressure');
      expect(of('blood pressure', 'd2')).toEqual(expect.any(Number));
      expect(similarities.source.dimensions).toBe(16);
    } finally {
      await embedder.close();
      await similarities.close();
    }
  });
});
