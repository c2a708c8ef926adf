/**
 * Writes a fast-path model directory in the layout of docs/fast-path-model-dir.md:
 *   model.json            the trees as XGBoost JSON (converted from ml-xgboost's legacy binary)
 *   meta.json             format, schema, objective, recommended threshold, provenance (no timestamps)
 *   splits.json           the query splits per collection (src/tooling/eval/query-set.ts)
 *   corpus-stats.msgpack  statistics of all training collections, the fallback when a caller has none
 *   training-report.json  grid, validation and test numbers (no timings, so reruns give the same bytes)
 *   MODEL_CARD.md
 * Files are staged in a temporary sibling folder and renamed into place, so a failed run never
 * leaves a half-written model where the old one was.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { PlattParameters } from '../../calibration/platt.js';
import { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, TOKENIZER_VERSION } from '../../features/schema.js';
import { readTreeModelIR } from '../../tiers/fast-path/load-tree-model.js';
import type { RankingBlend } from '../../tiers/fast-path/ranking-blend.js';
import { writeXGBoostJson } from '../../tiers/fast-path/xgboost-json-writer.js';
import type { SplitsFile } from '../eval/query-set.js';
import { SPLITS_FILE } from '../eval/query-set.js';

export const MODEL_FILE = 'model.json';
export const META_FILE = 'meta.json';
export const STATS_FILE = 'corpus-stats.msgpack';
export const TRAINING_REPORT_FILE = 'training-report.json';
export const MODEL_CARD_FILE = 'MODEL_CARD.md';

export interface FastPathMetaInput {
  readonly objective: string;
  readonly recommendedThreshold: number;
  readonly targetPrecision: number;
  readonly trainedOn: readonly string[];
  /** relevance = σ(a·margin + b) (src/calibration/platt.ts). */
  readonly calibration?: PlattParameters;
  /** The ordering signal's blend weight (src/tiers/fast-path/ranking-blend.ts); absent: no `ranking` signal. */
  readonly rankingBlend?: RankingBlend;
  /** Everything else worth keeping (hyperparameters, seed, library versions). Must be deterministic. */
  readonly provenance: Readonly<Record<string, unknown>>;
}

/** XGBoost JSON text of model bytes in any format loadTreeModel reads. */
export async function modelBytesToXGBoostJson(modelBytes: Uint8Array): Promise<string> {
  const { ir } = await readTreeModelIR(modelBytes);
  return writeXGBoostJson(ir);
}

export function buildMeta(input: FastPathMetaInput): Record<string, unknown> {
  return {
    format: 'relevance-gate/fastpath-model',
    formatVersion: 1,
    schemaVersion: FEATURE_SCHEMA_VERSION,
    tokenizerVersion: TOKENIZER_VERSION,
    featureNames: FEATURE_NAMES,
    modelFile: MODEL_FILE,
    objective: input.objective,
    recommendedThreshold: input.recommendedThreshold,
    targetPrecision: input.targetPrecision,
    statsFile: STATS_FILE,
    trainedOn: input.trainedOn,
    ...(input.calibration ? { calibration: input.calibration } : {}),
    ...(input.rankingBlend ? { rankingBlend: { lambda: input.rankingBlend.lambda } } : {}),
    ...input.provenance,
  };
}

export interface CoreModelFiles {
  readonly modelJson: string;
  readonly meta: Record<string, unknown>;
  readonly splits: SplitsFile;
  readonly statsBytes: Uint8Array;
}

export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A model directory being written: core files go to `<dir>.tmp-<pid>` first (so the new model can be
 * loaded and evaluated from there), reports are added, then commit() swaps it into place.
 */
export interface StagedModelDir {
  /** Where the staged files are (loadable by loadFastPathScorer). */
  readonly path: string;
  writeReports(trainingReport: unknown, modelCard: string): void;
  commit(): void;
  discard(): void;
}

export function stageModelDir(dir: string, files: CoreModelFiles): StagedModelDir {
  const target = resolve(dir);
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, MODEL_FILE), files.modelJson);
  writeFileSync(join(tmp, META_FILE), jsonText(files.meta));
  writeFileSync(join(tmp, SPLITS_FILE), jsonText(files.splits));
  writeFileSync(join(tmp, STATS_FILE), files.statsBytes);
  return {
    path: tmp,
    writeReports(trainingReport, modelCard) {
      writeFileSync(join(tmp, TRAINING_REPORT_FILE), jsonText(trainingReport));
      writeFileSync(join(tmp, MODEL_CARD_FILE), modelCard);
    },
    commit() {
      const old = `${tmp}.old`;
      rmSync(old, { recursive: true, force: true });
      if (existsSync(target)) renameSync(target, old);
      renameSync(tmp, target);
      rmSync(old, { recursive: true, force: true });
    },
    discard() {
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
