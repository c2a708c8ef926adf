import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortedError,
  type CorpusStats,
  DeadlineExceededError,
  FeatureSchemaMismatchError,
  InvalidArgumentError,
  ModelFormatError,
  UnsupportedModelError,
  loadFastPathScorer,
} from '../../src/index.js';
import { isDetailedPairScore } from '../../src/types.js';
import { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, NUM_FEATURES, TOKENIZER_VERSION } from '../../src/features/schema.js';
import { buildCorpusStats, saveCorpusStats } from '../../src/features/corpus-stats.js';
import { extractFeatures } from '../../src/features/extract.js';
import { writeXGBoostJson } from '../../src/tiers/fast-path/xgboost-json-writer.js';
import { plattProbability } from '../../src/calibration/platt.js';
import type { TreeEnsembleIR, TreeIR } from '../../src/tiers/fast-path/model-ir.js';

const col = (name: string): number => FEATURE_NAMES.indexOf(name);

// Two stumps: bm25_all < 5 → -1 else +1 (missing → left); retrieval_rank < 3.5 → 0.5 else -0.5
// (missing → right). Small enough to evaluate by hand below.
function stump(feature: number, threshold: number, leftLeaf: number, rightLeaf: number, defaultLeft: boolean): TreeIR {
  return {
    group: 0,
    weight: 1,
    left: Int32Array.from([1, -1, -1]),
    right: Int32Array.from([2, -1, -1]),
    splitIndex: Int32Array.from([feature, 0, 0]),
    splitCondition: Float32Array.from([threshold, leftLeaf, rightLeaf]),
    defaultLeft: Uint8Array.from([defaultLeft ? 1 : 0, 0, 0]),
  };
}
function fixtureIR(numFeatures = NUM_FEATURES): TreeEnsembleIR {
  return {
    booster: 'gbtree',
    objective: 'binary:logistic',
    numFeatures,
    numGroups: 1,
    baseMargin: 0,
    baseScore: 0.5,
    trees: [stump(col('bm25_all'), 5, -1, 1, true), stump(col('retrieval_rank'), 3.5, 0.5, -0.5, false)],
  };
}
function handMargin(row: Float32Array): number {
  const bm = row[col('bm25_all')]!;
  const rank = row[col('retrieval_rank')]!;
  const t0 = Number.isNaN(bm) || bm < 5 ? -1 : 1;
  const t1 = !Number.isNaN(rank) && rank < 3.5 ? 0.5 : -0.5;
  return t0 + t1;
}

const root = mkdtempSync(join(tmpdir(), 'rg-fast-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const docs = [
  { id: '1', title: 'Boundary layer', text: 'The boundary layer of a flat plate in supersonic flow.' },
  { id: '2', title: '', text: 'Heat transfer in hypersonic flow; heat flux measurements.' },
  { id: '3', title: 'Wings', text: 'Wing flutter of swept wings at transonic speeds.' },
  { id: '4', title: '', text: 'Shock waves and boundary layer interaction on a wedge.' },
];
let stats: CorpusStats;

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
    targetPrecision: 0.8,
    statsFile: 'corpus-stats.msgpack',
    trainedOn: ['fixture'],
    ...extra,
  };
}

async function modelDir(
  name: string,
  m: Record<string, unknown>,
  ir: TreeEnsembleIR = fixtureIR(),
  withStats = true,
): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.json'), writeXGBoostJson(ir));
  writeFileSync(join(dir, 'meta.json'), JSON.stringify(m));
  if (withStats) await saveCorpusStats(stats, join(dir, 'corpus-stats.msgpack'));
  return dir;
}

beforeAll(async () => {
  stats = await buildCorpusStats(docs);
});

describe('loadFastPathScorer', () => {
  it('scores text end to end: probability = sigmoid(hand-evaluated trees on the extracted features)', async () => {
    const scorer = await loadFastPathScorer(await modelDir('ok', meta()));
    expect(scorer.statsSource).toBe('model');
    expect(scorer.recommendedThreshold).toBe(0.5);
    expect(scorer.modelId).toMatch(new RegExp(`^fastpath/${FEATURE_SCHEMA_VERSION}/[0-9a-f]{20}$`));
    expect(scorer.statsId).toMatch(/^stats\/[0-9a-f]{16}$/);
    expect(scorer.id).toBe(`${scorer.modelId}@${scorer.statsId}`);
    const query = 'supersonic boundary layer flow';
    const passages = [
      {
        id: 'a',
        title: 'Boundary layer',
        text: 'supersonic boundary layer flow over a plate',
        features: { retrieval_rank: 1 },
      },
      { id: 'b', text: 'wing flutter', features: { retrieval_rank: 9 } },
      { id: 'c', text: 'boundary layer' },
    ];
    const results = await scorer.score(query, passages);
    const rows = extractFeatures(
      stats,
      query,
      passages,
      passages.map((p) => p.features),
    );
    expect(results).toHaveLength(3);
    results.forEach((r, i) => {
      expect(r).not.toBeNull();
      if (r === null || !isDetailedPairScore(r)) throw new Error('expected a detailed score');
      const m = handMargin(rows.subarray(i * NUM_FEATURES, (i + 1) * NUM_FEATURES));
      expect(r.tier).toBe('fast-path');
      expect(r.raw?.relevant).toBeCloseTo(m, 6);
      expect(r.probabilities.relevant).toBeCloseTo(1 / (1 + Math.exp(-m)), 6);
    });
    // The hand evaluation takes both branches of both trees across these passages.
    const margins = results.map((r) => (r !== null && isDetailedPairScore(r) ? r.raw!.relevant : NaN));
    expect(new Set(margins).size).toBeGreaterThan(1);
    expect(await scorer.score(query, [])).toEqual([]);
  });

  it('uses dense passage.features as the whole row', async () => {
    const scorer = await loadFastPathScorer(await modelDir('dense', meta()));
    const row = new Float32Array(NUM_FEATURES).fill(Number.NaN);
    row[col('bm25_all')] = 10;
    row[col('retrieval_rank')] = 2;
    const [r] = await scorer.score('anything', [{ id: 'x', text: 'unrelated', features: row }]);
    expect(r !== null && isDetailedPairScore(r) ? r.raw!.relevant : NaN).toBeCloseTo(1.5, 6);
    await expect(scorer.score('q', [{ id: 'x', text: 't', features: new Float32Array(3) }])).rejects.toThrow(
      InvalidArgumentError,
    );
  });

  it("uses the caller's statistics when given, and the id changes with them", async () => {
    const dir = await modelDir('callerstats', meta());
    const own = await buildCorpusStats([{ text: 'boundary layer boundary layer' }, { text: 'flutter' }]);
    const statsPath = join(root, 'own.msgpack');
    await saveCorpusStats(own, statsPath);
    const fromModel = await loadFastPathScorer(dir);
    const fromPath = await loadFastPathScorer(dir, { statsPath });
    const fromObject = await loadFastPathScorer(dir, { stats: own });
    expect(fromPath.statsSource).toBe('caller');
    expect(fromPath.id).toBe(fromObject.id);
    expect(fromPath.id).not.toBe(fromModel.id);
    const q = 'boundary layer';
    const p = [{ id: 'a', text: 'boundary layer' }];
    expect(Array.from(fromPath.features(q, p))).toEqual(Array.from(extractFeatures(own, q, p)));
    await expect(loadFastPathScorer(dir, { stats: own, statsPath })).rejects.toThrow(InvalidArgumentError);
  });

  it('refuses a model trained on another feature schema', async () => {
    const reversed = [...FEATURE_NAMES].reverse();
    const cases: Array<Record<string, unknown>> = [
      meta({ schemaVersion: 'lexical-v0' }),
      meta({ featureNames: reversed }),
      meta({ featureNames: FEATURE_NAMES.slice(1) }),
      meta({ tokenizerVersion: 'rg-tok-0' }),
    ];
    for (const [i, m] of cases.entries()) {
      await expect(loadFastPathScorer(await modelDir(`mismatch${i}`, m))).rejects.toThrow(FeatureSchemaMismatchError);
    }
    await expect(loadFastPathScorer(await modelDir('narrow', meta(), fixtureIR(22)))).rejects.toThrow(
      FeatureSchemaMismatchError,
    );
    const err = await loadFastPathScorer(await modelDir('code', meta({ schemaVersion: 'x' }))).catch((e: unknown) => e);
    expect((err as FeatureSchemaMismatchError).code).toBe('RG_ERR_FEATURE_SCHEMA_MISMATCH');
  });

  it('refuses malformed directories with typed errors', async () => {
    await expect(loadFastPathScorer(join(root, 'does-not-exist'))).rejects.toThrow(InvalidArgumentError);
    await expect(loadFastPathScorer(await modelDir('fmt', meta({ format: 'other' })))).rejects.toThrow(
      ModelFormatError,
    );
    await expect(loadFastPathScorer(await modelDir('escape', meta({ modelFile: '../ok/model.json' })))).rejects.toThrow(
      ModelFormatError,
    );
    await expect(loadFastPathScorer(await modelDir('obj', meta({ objective: 'reg:logistic' })))).rejects.toThrow(
      ModelFormatError,
    );
    const squared = { ...fixtureIR(), objective: 'reg:squarederror' as const, baseScore: 0 };
    await expect(
      loadFastPathScorer(await modelDir('uncal', meta({ objective: 'reg:squarederror' }), squared)),
    ).rejects.toThrow(UnsupportedModelError);
    const calibrated = await loadFastPathScorer(
      await modelDir(
        'cal',
        meta({ objective: 'reg:squarederror', calibration: { type: 'platt', a: 2, b: -1 } }),
        squared,
      ),
    );
    const [r] = await calibrated.score('q', [{ id: 'a', text: 'x', features: { retrieval_rank: 1 } }]);
    const m = r !== null && isDetailedPairScore(r) ? r.raw!.relevant : NaN;
    expect(m).toBeCloseTo(-0.5, 6);
    expect(r !== null && isDetailedPairScore(r) ? r.probabilities.relevant : NaN).toBeCloseTo(
      1 / (1 + Math.exp(-(2 * m - 1))),
      6,
    );
    // The meta.json calibration is the shared Platt convention, σ(a·margin + b), bit for bit.
    expect(r !== null && isDetailedPairScore(r) ? r.probabilities.relevant : NaN).toBe(
      plattProbability(calibrated.meta.calibration!, m),
    );
    expect(calibrated.meta.calibration).toEqual({ type: 'platt', a: 2, b: -1 });
    const nostats = await modelDir('nostats', meta({ statsFile: undefined }), fixtureIR(), false);
    await expect(loadFastPathScorer(nostats)).rejects.toThrow(InvalidArgumentError);
    const bad = join(root, 'badjson');
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, 'meta.json'), '{');
    await expect(loadFastPathScorer(bad)).rejects.toThrow(ModelFormatError);
  });

  it('honours abort signals and deadlines, and rejects bad passages', async () => {
    const scorer = await loadFastPathScorer(await modelDir('time', meta()));
    const ac = new AbortController();
    ac.abort();
    await expect(scorer.score('q', [{ id: 'a', text: 'x' }], { signal: ac.signal })).rejects.toThrow(AbortedError);
    await expect(scorer.score('q', [{ id: 'a', text: 'x' }], { deadline: Date.now() - 1 })).rejects.toThrow(
      DeadlineExceededError,
    );
    await expect(scorer.score('q', [{ id: 'a', text: 5 as unknown as string }])).rejects.toThrow(InvalidArgumentError);
    await expect(scorer.score(7 as unknown as string, [])).rejects.toThrow(InvalidArgumentError);
    await expect(
      scorer.score('q', [{ id: 'a', text: 'x', features: { retrieval_rank: 'first' as unknown as number } }]),
    ).rejects.toThrow(InvalidArgumentError);
  });
});
