/**
 * `relevance-gate import-model <folder> --as bi-encoder|cross-encoder --out <dir>`: a Hugging Face
 * folder with safetensors weights → the engine's ONNX model folder (fp32 + int8, tokenizer files,
 * relevance-gate-model.json, PROVENANCE.json). Skips the work when the output is up to date.
 * docs/models.md, "Bring your own model".
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

interface ImportModelCliOptions {
  as: string;
  out: string;
  pooling?: string;
  seed: string;
  int8: boolean;
  force?: boolean;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function runImportModel(folder: string, options: ImportModelCliOptions): Promise<void> {
  const models = await import('../../tooling/model-gen/index.js');
  if (!(models.IMPORTED_MODEL_KINDS as readonly string[]).includes(options.as)) {
    throw new InvalidArgumentError(`--as must be ${models.IMPORTED_MODEL_KINDS.join(' or ')}, got "${options.as}"`);
  }
  if (options.pooling !== undefined && !(models.POOLING_MODES as readonly string[]).includes(options.pooling)) {
    throw new InvalidArgumentError(
      `--pooling must be one of ${models.POOLING_MODES.join(', ')}, got "${options.pooling}"`,
    );
  }
  if (!/^\d+$/.test(options.seed) || Number(options.seed) > 0xffffffff) {
    throw new InvalidArgumentError(`--seed must be an integer in [0, 4294967295], got "${options.seed}"`);
  }
  const result = await models.importModel(folder, {
    kind: options.as as 'bi-encoder' | 'cross-encoder',
    outDir: options.out,
    seed: Number(options.seed),
    int8: options.int8,
    ...(options.pooling !== undefined ? { pooling: options.pooling as 'mean' | 'cls' | 'max' | 'mean_sqrt_len' } : {}),
    ...(options.force === true ? { force: true } : {}),
  });
  const d = result.descriptor;
  const what =
    d.kind === 'bi-encoder'
      ? `bi-encoder, ${d.dimensions} dims, ${d.pooling} pooling, L2-normalised, max length ${d.maxLength}`
      : `cross-encoder, logits [batch, ${d.dimensions}]${d.head?.file ? ` (head: ${d.head.note.split(':')[0]})` : ''}`;
  if (result.skipped) {
    process.stdout.write(`import-model: ${result.dir} is up to date (${what}; same inputs)\n`);
    return;
  }
  const onnx = [d.files.fp32, d.files.int8]
    .filter((f): f is string => f !== null)
    .map((f) => `${f} ${megabytes(result.files[f]!.size)}`)
    .join(', ');
  process.stdout.write(
    `import-model: ${folder} → ${result.dir} in ${(result.elapsedMs / 1000).toFixed(1)} s (${what}; ${onnx}; ` +
      `weights ${d.source.weightDtypes.join('/')}, license ${d.source.license ?? 'unknown'})\n`,
  );
}

export function register(program: Command): void {
  program
    .command('import-model')
    .description(
      'Import a Hugging Face model folder with safetensors weights (BERT) as an ONNX bi-encoder (pooled, L2-normalised ' +
        '`embeddings`) or cross-encoder (`logits`): onnx/model.onnx, onnx/model_int8.onnx, tokenizer files, ' +
        'relevance-gate-model.json, PROVENANCE.json. pytorch_model.bin (pickle) is refused: export those to ONNX (docs/models.md).',
    )
    .argument('<folder>', 'Hugging Face model folder (config.json, tokenizer files, model.safetensors)')
    .requiredOption('--as <kind>', 'bi-encoder | cross-encoder')
    .requiredOption('--out <dir>', 'output folder (replaced when out of date)')
    .option(
      '--pooling <mode>',
      "bi-encoder pooling: mean | cls | max | mean_sqrt_len (default: the folder's 1_Pooling, else mean)",
    )
    .option('--seed <n>', 'seed of a head the checkpoint lacks (cross-encoder from a bi-encoder checkpoint)', '42')
    .option('--no-int8', 'do not write onnx/model_int8.onnx')
    .option('--force', 'rebuild even when the output is up to date')
    .action(async (folder: string, opts: ImportModelCliOptions) => {
      await runImportModel(folder, opts);
    });
}
