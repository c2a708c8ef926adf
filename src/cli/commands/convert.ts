/**
 * `relevance-gate convert --model FILE --out OUT.json`: writes any loadable tree model (JSON,
 * UBJSON, legacy binary, ml-xgboost toJSON() file, LightGBM text) as XGBoost JSON, loadable by
 * XGBoost itself (checked with XGBoost 1.7.4) and by loadTreeModel with identical predictions.
 * A LightGBM model converts with its splits exact, but XGBoost JSON holds float32 leaves that
 * XGBoost sums in float32, so the result agrees with LightGBM to float32 precision, not bit for
 * bit; the message says so.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

interface ConvertCliOptions {
  model: string;
  out: string;
}

export async function runConvert(opts: ConvertCliOptions): Promise<string> {
  const { writeFile } = await import('node:fs/promises');
  const { readTreeModelIR } = await import('../../tiers/fast-path/load-tree-model.js');
  const { writeXGBoostJson } = await import('../../tiers/fast-path/xgboost-json-writer.js');
  const { format, ir } = await readTreeModelIR(opts.model);
  const json = writeXGBoostJson(ir);
  try {
    await writeFile(opts.out, json);
  } catch (cause) {
    throw new InvalidArgumentError(`cannot write --out ${opts.out}: ${(cause as Error).message}`, { cause });
  }
  const note =
    ir.marginPrecision === 'float64'
      ? '; float64 leaves written as float32 and summed in float32 by XGBoost: predictions agree to float32 precision'
      : '';
  const infNote =
    ir.clampPositiveInfinity === true ? '; XGBoost sends an input of +inf right at its +inf thresholds' : '';
  return `wrote ${opts.out}: ${format} → XGBoost JSON (${ir.objective}, ${ir.booster}, ${ir.trees.length} trees, ${ir.numFeatures} features, ${json.length} bytes${note}${infNote})\n`;
}

export function register(program: Command): void {
  program
    .command('convert')
    .description('Write any loadable tree model as XGBoost JSON (for XGBoost and other tools).')
    .requiredOption(
      '--model <file>',
      'model: XGBoost JSON, UBJSON, legacy binary, ml-xgboost toJSON() file, or LightGBM text',
    )
    .requiredOption('--out <file>', 'output XGBoost JSON file')
    .action(async (opts: ConvertCliOptions) => {
      process.stderr.write(await runConvert(opts));
    });
}
