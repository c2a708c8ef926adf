/**
 * `relevance-gate train --data FILE --label COL --out MODEL [...]`: trains a gradient-boosted tree
 * model with ml-xgboost from a CSV (with header) or JSONL feature file, prints train/validation
 * metrics (logloss + AUC for binary objectives, RMSE for regression, mlogloss + accuracy for
 * multi-class), and saves the model: XGBoost JSON when MODEL ends in .json, otherwise XGBoost's
 * legacy binary. Both load with loadTreeModel / `predict --model`.
 */
import type { Command } from 'commander';
import { isInteger, numberOption } from '../../util/number-option.js';

interface TrainCliOptions {
  data: string;
  label: string;
  features?: string;
  objective: string;
  rounds: string;
  maxDepth: string;
  eta: string;
  validFraction?: string;
  valid?: string;
  seed: string;
  subsample: string;
  colsample: string;
  minChildWeight: string;
  numClass?: string;
  treeMethod: string;
  minusOneAsMissing?: boolean;
  out: string;
  progress: boolean;
}

const number = (flag: string, text: string): number => numberOption(flag, text);
const integer = (flag: string, text: string): number => numberOption(flag, text, isInteger, 'an integer');

export function register(program: Command): void {
  program
    .command('train')
    .description(
      'Train a tree model with ml-xgboost from a CSV (header) or JSONL feature file; prints train/validation metrics; ' +
        'saves XGBoost JSON if --out ends in .json, else the XGBoost legacy binary.',
    )
    .requiredOption('--data <file>', 'training data: .csv with a header row, or .jsonl (one object per line)')
    .requiredOption('--label <column>', 'label column')
    .option('--features <a,b,c>', 'feature columns in model order (default: all columns but the label)')
    .option(
      '--objective <name>',
      'binary:logistic | binary:logitraw | reg:logistic | reg:squarederror | multi:softprob | multi:softmax',
      'binary:logistic',
    )
    .option('--rounds <n>', 'boosting rounds', '100')
    .option('--max-depth <d>', 'maximum tree depth', '6')
    .option('--eta <e>', 'learning rate', '0.3')
    .option('--valid-fraction <f>', 'fraction of rows held out for validation (seeded shuffle); default 0.2')
    .option('--valid <file>', 'separate validation file (same columns) instead of a split')
    .option('--seed <s>', 'seed for XGBoost and the split', '0')
    .option('--subsample <f>', 'row subsample per tree', '1')
    .option('--colsample <f>', 'column subsample per tree', '1')
    .option('--min-child-weight <w>', 'minimum hessian per leaf', '1')
    .option('--num-class <k>', 'classes, for multi:* objectives')
    .option('--tree-method <m>', 'exact | approx | hist', 'exact')
    .option(
      '--minus-one-as-missing',
      'accept -1.0 feature values as missing (ml-xgboost treats -1 as its missing marker)',
    )
    .requiredOption('--out <file>', 'model output (.json → XGBoost JSON, otherwise legacy binary)')
    .option('--no-progress', 'no progress display')
    .action(async (opts: TrainCliOptions) => {
      const { runTreeTraining } = await import('../../tooling/training/trees/train-trees.js');
      const { createProgress } = await import('../../util/progress.js');
      const rounds = integer('rounds', opts.rounds);
      const bar = opts.progress ? createProgress('train', rounds) : undefined;
      const report = await runTreeTraining({
        data: opts.data,
        label: opts.label,
        ...(opts.features
          ? {
              features: opts.features
                .split(',')
                .map((s) => s.trim())
                .filter((s) => s !== ''),
            }
          : {}),
        ...(opts.valid ? { valid: opts.valid } : {}),
        ...(opts.validFraction !== undefined ? { validFraction: number('valid-fraction', opts.validFraction) } : {}),
        out: opts.out,
        params: {
          objective: opts.objective as never,
          rounds,
          maxDepth: integer('max-depth', opts.maxDepth),
          eta: number('eta', opts.eta),
          seed: integer('seed', opts.seed),
          subsample: number('subsample', opts.subsample),
          colsampleBytree: number('colsample', opts.colsample),
          minChildWeight: number('min-child-weight', opts.minChildWeight),
          treeMethod: opts.treeMethod as never,
          ...(opts.numClass !== undefined ? { numClass: integer('num-class', opts.numClass) } : {}),
        },
        ...(opts.minusOneAsMissing ? { minusOne: 'as-missing' as const } : {}),
        ...(bar ? { onProgress: (done: number) => bar.update(done) } : {}),
      });
      bar?.finish();
      const fmt = (m: Record<string, number>): string =>
        Object.entries(m)
          .map(([k, v]) => `${k}=${v.toFixed(6)}`)
          .join(' ');
      process.stdout.write(
        `train (${report.trainRows} rows): ${fmt(report.train)}\n` +
          (report.valid ? `valid (${report.validRows} rows): ${fmt(report.valid)}\n` : 'valid: none\n') +
          `saved ${report.out} (${report.format}, ${report.featureNames.length} features: ${report.featureNames.join(',')}) in ${report.seconds.toFixed(1)}s\n`,
      );
    });
}
