/**
 * `relevance-gate predict --model FILE --input X.csv [--output margin|value]`: scores a headerless
 * feature CSV (`nan` or empty = missing) with any loadable tree model and prints one line per row,
 * outputs comma-separated, with enough digits to round-trip (see training/feature-csv.ts).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

interface PredictCliOptions {
  model: string;
  input: string;
  output: string;
}

/** Rows per predict call: bounds the output buffer while keeping calls large. */
const BATCH_ROWS = 4096;

export async function runPredict(opts: PredictCliOptions, write: (s: string) => void): Promise<void> {
  if (opts.output !== 'margin' && opts.output !== 'value') {
    throw new InvalidArgumentError(`--output must be margin or value, got "${opts.output}"`);
  }
  const { readFile } = await import('node:fs/promises');
  const { loadTreeModel } = await import('../../tiers/fast-path/load-tree-model.js');
  const { parseFeatureCsv, formatOutputRows } = await import('../../tooling/training/trees/feature-csv.js');
  const model = await loadTreeModel(opts.model);
  try {
    let text: string;
    try {
      text = await readFile(opts.input, 'utf8');
    } catch (cause) {
      throw new InvalidArgumentError(`cannot read --input ${opts.input}: ${(cause as Error).message}`, { cause });
    }
    const { rows, nRows } = parseFeatureCsv(text, model.numFeatures, opts.input);
    for (let start = 0; start < nRows; start += BATCH_ROWS) {
      const n = Math.min(BATCH_ROWS, nRows - start);
      const batch = rows.subarray(start * model.numFeatures, (start + n) * model.numFeatures);
      write(formatOutputRows(model.predict(batch, n, { output: opts.output }), n));
    }
  } finally {
    model.dispose();
  }
}

export function register(program: Command): void {
  program
    .command('predict')
    .description('Score a headerless feature CSV (nan or empty = missing) with a tree model; one output line per row.')
    .requiredOption('--model <file>', 'model: XGBoost JSON, UBJSON, legacy binary, or ml-xgboost toJSON() file')
    .requiredOption('--input <file>', 'headerless CSV of float features, one row per line')
    .option('--output <kind>', 'margin (raw sum) or value (after the objective transform)', 'value')
    .action(async (opts: PredictCliOptions) => {
      await runPredict(opts, (s) => process.stdout.write(s));
    });
}
