import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CorpusStats,
  createGate,
  loadFastPathScorer,
  ModelFormatError,
  RANKING,
  rerouteResult,
} from '../../src/index.js';
import { isDetailedPairScore } from '../../src/types.js';
import { buildCorpusStats, saveCorpusStats } from '../../src/features/corpus-stats.js';
import { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, NUM_FEATURES, TOKENIZER_VERSION } from '../../src/features/schema.js';
import type { TreeEnsembleIR, TreeIR } from '../../src/tiers/fast-path/model-ir.js';
import { lexicalEvidence, rankingLogit, rankingProbability } from '../../src/tiers/fast-path/ranking-blend.js';
import { writeXGBoostJson } from '../../src/tiers/fast-path/xgboost-json-writer.js';

const col = (name: string): number => FEATURE_NAMES.indexOf(name);

// One stump on query_coverage: the margin rewards covering the query, so the margin order and the
// BM25 order differ (the blend then changes the order).
function stump(feature: number, threshold: number, leftLeaf: number, rightLeaf: number): TreeIR {
  return {
    group: 0,
    weight: 1,
    left: Int32Array.from([1, -1, -1]),
    right: Int32Array.from([2, -1, -1]),
    splitIndex: Int32Array.from([feature, 0, 0]),
    splitCondition: Float32Array.from([threshold, leftLeaf, rightLeaf]),
    defaultLeft: Uint8Array.from([1, 0, 0]),
  };
}
const IR: TreeEnsembleIR = {
  booster: 'gbtree',
  objective: 'binary:logistic',
  numFeatures: NUM_FEATURES,
  numGroups: 1,
  baseMargin: 0,
  baseScore: 0.5,
  trees: [stump(col('query_coverage'), 0.99, -1, 1), stump(col('body_length'), 12, 0.25, -0.25)],
};

const root = mkdtempSync(join(tmpdir(), 'rg-fast-path-ranking-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const docs = [
  { id: '1', title: 'Boundary layer', text: 'The boundary layer of a flat plate in supersonic flow.' },
  { id: '2', title: '', text: 'Heat transfer in hypersonic flow; heat flux measurements.' },
  { id: '3', title: 'Wings', text: 'Wing flutter of swept wings at transonic speeds.' },
  { id: '4', title: '', text: 'Shock waves and boundary layer interaction on a wedge.' },
];
let stats: CorpusStats;
beforeAll(async () => {
  stats = await buildCorpusStats(docs);
});

function meta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    format: 'relevance-gate/fastpath-model',
    formatVersion: 1,
    schemaVersion: FEATURE_SCHEMA_VERSION,
    tokenizerVersion: TOKENIZER_VERSION,
    featureNames: [...FEATURE_NAMES],
    modelFile: 'model.json',
    objective: 'binary:logistic',
    recommendedThreshold: 0.5,
    statsFile: 'corpus-stats.msgpack',
    trainedOn: ['fixture'],
    ...extra,
  };
}
async function modelDir(name: string, m: Record<string, unknown>): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.json'), writeXGBoostJson(IR));
  writeFileSync(join(dir, 'meta.json'), JSON.stringify(m));
  await saveCorpusStats(stats, join(dir, 'corpus-stats.msgpack'));
  return dir;
}

const QUERY = 'boundary layer supersonic flow heat';
const PASSAGES = [
  { id: 'a', text: 'heat heat heat heat heat flux of heat in heat transfer heat' },
  { id: 'b', title: 'Boundary layer', text: 'supersonic boundary layer flow heat' },
  { id: 'c', text: 'wing flutter at transonic speeds' },
  { id: 'd', text: 'boundary layer interaction with shock waves on a long wedge in supersonic wind tunnels' },
  { id: 'e', text: 'flow' },
];

describe('the fast path ranking signal', () => {
  it('an older model (no rankingBlend) emits relevant only, exactly as before', async () => {
    const scorer = await loadFastPathScorer(await modelDir('plain', meta()));
    expect(scorer.signals).toEqual(['relevant']);
    const results = await scorer.score(QUERY, PASSAGES);
    for (const r of results) {
      if (r === null || !isDetailedPairScore(r)) throw new Error('expected a detailed score');
      expect(Object.keys(r.probabilities)).toEqual(['relevant']);
      expect(Object.keys(r.raw ?? {})).toEqual(['relevant']);
    }
  });

  it('a model declaring λ emits ranking = σ((margin + λ·e)/(1 + λ)) in [0, 1]; relevant unchanged', async () => {
    const plain = await loadFastPathScorer(await modelDir('plain2', meta()));
    const lambda = 3;
    const blended = await loadFastPathScorer(await modelDir('blend', meta({ rankingBlend: { lambda } })));
    expect(blended.signals).toEqual(['relevant', RANKING]);
    expect(blended.modelId).not.toBe(plain.modelId); // scores differ, so cache keys must
    const a = await plain.score(QUERY, PASSAGES);
    const b = await blended.score(QUERY, PASSAGES);
    const rows = blended.features(QUERY, PASSAGES);
    const rankings: number[] = [];
    b.forEach((r, i) => {
      const p = a[i];
      if (r === null || !isDetailedPairScore(r) || p === null || !isDetailedPairScore(p)) throw new Error('detailed');
      expect(r.probabilities.relevant).toBe(p.probabilities.relevant);
      expect(r.raw?.relevant).toBe(p.raw?.relevant);
      const m = r.raw!.relevant!;
      const row = rows.subarray(i * NUM_FEATURES, (i + 1) * NUM_FEATURES);
      const e = row[col('bm25_all')]! / (2.2 * row[col('query_idf_sum')]!);
      expect(lexicalEvidence(row[col('bm25_all')]!, row[col('query_idf_sum')]!)).toBeCloseTo(e, 12);
      const z = (m + lambda * e) / (1 + lambda);
      expect(r.raw?.[RANKING]).toBeCloseTo(z, 12);
      expect(r.probabilities[RANKING]).toBeCloseTo(1 / (1 + Math.exp(-z)), 12);
      expect(r.probabilities[RANKING]).toBe(rankingProbability(rankingLogit(m, e, lambda)));
      expect(r.probabilities[RANKING]).toBeGreaterThanOrEqual(0);
      expect(r.probabilities[RANKING]).toBeLessThanOrEqual(1);
      rankings.push(r.probabilities[RANKING]!);
    });
    // The fixture is built so that the blend reorders: the ranking order is not the relevance order.
    const byRel = [...b.keys()].sort((x, y) => relevanceOf(b[y]) - relevanceOf(b[x]) || x - y);
    const byRank = [...b.keys()].sort((x, y) => rankings[y]! - rankings[x]! || x - y);
    expect(byRank).not.toEqual(byRel);
  });

  it('the gate returns the ranking order; reroute from stored signals gives the same order', async () => {
    const blended = await loadFastPathScorer(await modelDir('blend-gate', meta({ rankingBlend: { lambda: 3 } })));
    const gate = createGate({ scorer: blended, policy: { threshold: 0 } });
    const r = await gate.filter(QUERY, PASSAGES);
    const order = r.included.map((i) => i.id);
    const expected = [...r.included]
      .sort((x, y) => y.signals![RANKING]! - x.signals![RANKING]! || x.rank - y.rank)
      .map((i) => i.id);
    expect(order).toEqual(expected);
    expect(rerouteResult(r, { threshold: 0 }).included.map((i) => i.id)).toEqual(order);
    // the same model without the blend returns relevance order, which differs here
    const plain = await loadFastPathScorer(await modelDir('plain-gate', meta()));
    const p = await createGate({ scorer: plain, policy: { threshold: 0 } }).filter(QUERY, PASSAGES);
    expect(p.included.map((i) => i.id)).not.toEqual(order);
  });

  it('λ = 0 orders as the margin does', async () => {
    const scorer = await loadFastPathScorer(await modelDir('zero', meta({ rankingBlend: { lambda: 0 } })));
    for (const r of await scorer.score(QUERY, PASSAGES)) {
      if (r === null || !isDetailedPairScore(r)) throw new Error('detailed');
      expect(r.probabilities[RANKING]).toBe(1 / (1 + Math.exp(-r.raw!.relevant!)));
    }
  });

  it('refuses a malformed rankingBlend', async () => {
    for (const [i, bad] of [
      null,
      3,
      { lambda: -1 },
      { lambda: 'x' },
      { lambda: 1, extra: 2 },
      { lambda: Infinity },
    ].entries()) {
      const m = meta({ rankingBlend: bad });
      const dir = await modelDir(`bad-${i}`, m);
      // Infinity does not survive JSON; write it as a huge literal instead
      if (bad !== null && typeof bad === 'object' && bad.lambda === Infinity)
        writeFileSync(join(dir, 'meta.json'), JSON.stringify(m).replace('null', '1e999'));
      await expect(loadFastPathScorer(dir)).rejects.toThrow(ModelFormatError);
    }
  });
});

function relevanceOf(r: unknown): number {
  if (r === null || !isDetailedPairScore(r as never)) throw new Error('detailed');
  return (r as { probabilities: { relevant: number } }).probabilities.relevant;
}
