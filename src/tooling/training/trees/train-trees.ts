/**
 * The `relevance-gate train` job: read a labelled table (CSV with header or JSONL), split off a
 * validation set (seeded) or read one, train with ml-xgboost (train-xgboost.ts), save the model,
 * and report train/validation metrics computed by the native evaluator on the saved model.
 *
 * Output format is chosen by the --out extension: `.json` → XGBoost JSON (converted from the trained
 * model, with feature names), anything else → XGBoost legacy binary (ml-xgboost's native bytes).
 * Both load with loadTreeModel.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { InvalidArgumentError } from '../../../errors.js';
import { parseTreeModelBytes } from '../../../tiers/fast-path/loaders/parse-model.js';
import { createTreeModel } from '../../../tiers/fast-path/tree-model.js';
import { writeXGBoostJson } from '../../../tiers/fast-path/xgboost-json-writer.js';
import { accuracy, auc, logloss, multiLogloss, rmse } from './metrics.js';
import { parseTable, splitRows, takeRows, type LabelledTable } from './tabular-data.js';
import { trainXGBoost, type XGBoostTrainParams } from './train-xgboost.js';
import type { TreeEnsembleIR } from '../../../tiers/fast-path/model-ir.js';

export interface TreeTrainingOptions {
  readonly data: string;
  readonly label: string;
  readonly features?: readonly string[];
  readonly valid?: string;
  /** Used when `valid` is absent; default 0.2. 0 = no validation set. */
  readonly validFraction?: number;
  readonly out: string;
  readonly params: XGBoostTrainParams;
  readonly minusOne?: 'error' | 'as-missing';
  readonly onProgress?: (done: number, total: number) => void;
}

export interface MetricSet {
  readonly [name: string]: number;
}

export interface TrainReport {
  readonly out: string;
  readonly format: 'xgboost-json' | 'legacy-binary';
  readonly featureNames: readonly string[];
  readonly trainRows: number;
  readonly validRows: number;
  readonly train: MetricSet;
  readonly valid?: MetricSet;
  readonly seconds: number;
}

async function readTable(path: string, label: string, features: readonly string[] | undefined): Promise<LabelledTable> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new InvalidArgumentError(`cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
  return parseTable(text, path, features ? { label, features } : { label });
}

function softmaxRows(margin: Float32Array, k: number): Float64Array {
  const out = new Float64Array(margin.length);
  for (let r = 0; r < margin.length / k; r++) {
    let max = -Infinity;
    for (let c = 0; c < k; c++) max = Math.max(max, margin[r * k + c] as number);
    let sum = 0;
    for (let c = 0; c < k; c++) sum += out[r * k + c] = Math.exp((margin[r * k + c] as number) - max);
    for (let c = 0; c < k; c++) out[r * k + c] = (out[r * k + c] as number) / sum;
  }
  return out;
}

/** Metrics for one table, from the native evaluator's margins. */
export function evaluate(ir: TreeEnsembleIR, table: LabelledTable): MetricSet {
  const model = createTreeModel(ir);
  try {
    const margin = model.predict(table.features, table.numRows, { output: 'margin' }) as Float32Array;
    const y = table.labels;
    switch (ir.objective) {
      case 'reg:squarederror':
        return { rmse: rmse(margin, y) };
      case 'multi:softprob':
      case 'multi:softmax': {
        const p = softmaxRows(margin, ir.numGroups);
        return { mlogloss: multiLogloss(p, y, ir.numGroups), accuracy: accuracy(p, y, ir.numGroups) };
      }
      default: {
        const p = Float64Array.from(margin, (m) => 1 / (1 + Math.exp(-m)));
        return { logloss: logloss(p, y), auc: auc(margin, y) };
      }
    }
  } finally {
    model.dispose();
  }
}

export async function runTreeTraining(o: TreeTrainingOptions): Promise<TrainReport> {
  const t0 = performance.now();
  if (o.valid !== undefined && o.validFraction !== undefined) {
    throw new InvalidArgumentError('use either --valid FILE or --valid-fraction F, not both');
  }
  const all = await readTable(o.data, o.label, o.features);
  let train: LabelledTable;
  let valid: LabelledTable | undefined;
  if (o.valid !== undefined) {
    train = all;
    valid = await readTable(o.valid, o.label, all.featureNames);
  } else {
    const fraction = o.validFraction ?? 0.2;
    const split = splitRows(all.numRows, fraction, o.params.seed ?? 0);
    train = fraction > 0 ? takeRows(all, split.train) : all;
    valid = split.valid.length > 0 ? takeRows(all, split.valid) : undefined;
  }
  if (train.numRows === 0) throw new InvalidArgumentError('no training rows left after the validation split');

  const trained = await trainXGBoost(
    { features: train.features, labels: train.labels, numRows: train.numRows, numFeatures: train.featureNames.length },
    o.params,
    { ...(o.onProgress ? { onProgress: o.onProgress } : {}), ...(o.minusOne ? { minusOne: o.minusOne } : {}) },
  );
  const parsed = parseTreeModelBytes(trained.bytes, 'trained model');
  const ir: TreeEnsembleIR = { ...parsed.ir, featureNames: train.featureNames };
  const asJson = /\.json$/i.test(o.out);
  try {
    await writeFile(o.out, asJson ? writeXGBoostJson(ir) : trained.bytes);
  } catch (cause) {
    throw new InvalidArgumentError(`cannot write --out ${o.out}: ${(cause as Error).message}`, { cause });
  }
  return {
    out: o.out,
    format: asJson ? 'xgboost-json' : 'legacy-binary',
    featureNames: train.featureNames,
    trainRows: train.numRows,
    validRows: valid?.numRows ?? 0,
    train: evaluate(ir, train),
    ...(valid ? { valid: evaluate(ir, valid) } : {}),
    seconds: (performance.now() - t0) / 1000,
  };
}
