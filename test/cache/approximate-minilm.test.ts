/**
 * The approximate query cache with the real all-MiniLM-L6-v2 embedding the queries (the embedding
 * tier's `embed`), the shipped fast-path model scoring, on a real MED query and its BM25 list.
 * Skipped, with a message, only when the model folder is absent (scripts/fetch-reference-models.sh).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEmbeddingScorer,
  createGate,
  createScoreCache,
  loadFastPathScorer,
  type EmbeddingScorer,
} from '../../src/index.js';
import { DEFAULT_APPROXIMATE_THRESHOLD } from '../../src/cache/approximate/approximate-reuse.js';
import { toPassage } from '../../src/tooling/eval/candidates.js';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { packageRoot } from '../../src/util/package-root.js';

const MODEL_DIR = process.env.RELEVANCE_GATE_MINILM_DIR ?? join(packageRoot(), 'models', '.cache', 'all-minilm-l6-v2');
const MED = join(packageRoot(), '..', 'shared', 'data', 'med');
const present = existsSync(join(MODEL_DIR, 'relevance-gate-model.json'));
if (!present)
  console.warn(
    `approximate cache on all-MiniLM-L6-v2 skipped: ${MODEL_DIR} is absent (run \`bash scripts/fetch-reference-models.sh\`); test/cache/approximate.test.ts covers the cache with a synthetic embedding`,
  );

describe.skipIf(!present)('approximate query cache on all-MiniLM-L6-v2', () => {
  let embedder: EmbeddingScorer;
  beforeAll(async () => {
    embedder = await createEmbeddingScorer({ modelDir: MODEL_DIR, workers: 1, intraOpThreads: 1 });
  }, 60_000);
  afterAll(async () => {
    await embedder?.close();
  });

  it('reuses the query with its stop words dropped (when the model puts it at or above the default threshold), never a different query', async () => {
    const med = loadCollection(MED);
    const query = (med.queryById.get('1')?.text ?? '').trim();
    const other = (med.queryById.get('2')?.text ?? '').trim();
    const passages = createBm25FirstStage(med)
      .search(query, 20)
      .map((c) => toPassage(med.docById.get(c.docId) as NonNullable<ReturnType<typeof med.docById.get>>));
    const cache = createScoreCache({
      maxBytes: 16 << 20,
      approximate: {
        model: embedder.modelId,
        embedTimeoutMs: 5000,
        embed: async (q, options) => (await embedder.embed([q], { ...options, as: 'query' }))[0],
      },
    });
    const gate = createGate({ scorer: await loadFastPathScorer(), cache });
    const fresh = await gate.filter(query, passages);
    expect(fresh.stats.approximateHits).toBe(0);
    // Dropped stop words: the same terms, cosine ≈ 0.99 with this model.
    const variant = query
      .split(/\s+/)
      .filter((w) => !['the', 'of', 'and', 'in', 'a', 'to', 'with', 'by', 'for'].includes(w.toLowerCase()))
      .join(' ');
    expect(variant).not.toBe(query);
    const [qv, vv, ov] = await embedder.embed([query, variant, other], { as: 'query' });
    let cosVariant = 0;
    let cosOther = 0;
    for (let i = 0; i < qv.length; i++) {
      cosVariant += qv[i] * vv[i];
      cosOther += qv[i] * ov[i];
    }
    const reused = await gate.filter(variant, passages);
    if (cosVariant >= DEFAULT_APPROXIMATE_THRESHOLD) expect(reused.stats.approximateHits).toBe(passages.length);
    else expect(reused.stats.approximateHits).toBe(0);
    expect(cosOther).toBeLessThan(DEFAULT_APPROXIMATE_THRESHOLD);
    const unrelated = await gate.filter(other, passages);
    expect(unrelated.stats.approximateHits).toBe(0);
    expect(cache.stats().approximateEmbedFailures).toBe(0);
    await cache.close();
  }, 60_000);
});
