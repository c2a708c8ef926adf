/**
 * The shipped model's meta.json calibration and recommended threshold are exactly what the training
 * code fits today from the model's own margins on its validation queries: the calibration convention
 * (σ(a·margin + b)) and the threshold rule are the ones the model was built with, bit for bit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CandidateList } from '../../src/tooling/eval/candidates.js';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { thresholdForPrecision } from '../../src/tooling/eval/metrics.js';
import { splitQueries } from '../../src/tooling/eval/splits.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { buildRankingDataset, type DatasetSource } from '../../src/tooling/training/dataset.js';
import { fitCalibration, gatePools, toProbabilities } from '../../src/tooling/training/train-fast-path.js';
import { createXGBoostBackend } from '../../src/tooling/training/xgboost-backend.js';
import { SHIPPED_FAST_PATH_MODEL_DIR } from '../../src/tiers/fast-path/fast-path-scorer.js';

const DATA = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');
// The pipeline's defaults (src/tooling/training/fast-path-pipeline.ts): BM25 top 100 per query, the gate sees the top 20.
const K = 100;
const GATE_K = 20;

describe('the shipped fast-path model', () => {
  it('meta.json calibration and recommendedThreshold are reproduced exactly from its validation margins', async () => {
    const meta = JSON.parse(readFileSync(join(SHIPPED_FAST_PATH_MODEL_DIR, 'meta.json'), 'utf8')) as {
      trainedOn: string[];
      seed: number;
      targetPrecision: number;
      recommendedThreshold: number;
      calibration: { type: 'platt'; a: number; b: number };
    };
    const sources: DatasetSource[] = [];
    for (const name of meta.trainedOn) {
      const collection = loadCollection(join(DATA, name));
      sources.push({
        collection,
        firstStage: createBm25FirstStage(collection),
        featurizer: new LexicalFeaturizer(await buildCorpusStats(collection.docs)),
        queryIds: splitQueries(collection, { seed: meta.seed }).validation,
        passthrough: (list: CandidateList, i: number) => ({ retrieval_rank: list.candidates[i]!.rank }),
      });
    }
    const validation = await buildRankingDataset(sources, K, () => {});
    const modelBytes = new Uint8Array(readFileSync(join(SHIPPED_FAST_PATH_MODEL_DIR, 'model.json')));
    const margins = await createXGBoostBackend().predictMargins(
      modelBytes,
      validation.features,
      validation.numRows,
      validation.featureNames.length,
    );
    const calibration = fitCalibration(gatePools(validation, margins, GATE_K).flat());
    expect(calibration).toEqual(meta.calibration);
    expect(JSON.stringify(calibration)).toBe(JSON.stringify(meta.calibration));
    const threshold = thresholdForPrecision(
      gatePools(validation, toProbabilities(margins, calibration), GATE_K).flat(),
      meta.targetPrecision,
    );
    expect(threshold?.threshold).toBe(meta.recommendedThreshold);
  }, 120_000);
});
