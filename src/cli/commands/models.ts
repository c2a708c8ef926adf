/**
 * `relevance-gate models --out DIR`: writes the benchmark cross-encoders (tinybert-l2, minilm-l6)
 * as Hugging Face–style folders. They are SPEED/SHAPE models (real BERT sizes, seeded random
 * weights), NOT relevance models.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

export const DEFAULT_MODELS_OUT = 'models/generated';

interface ModelsOptions {
  out: string;
  only?: string;
  seed: string;
  tokenizer?: string;
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 0xffffffff) {
    throw new InvalidArgumentError(`--seed must be an integer in [0, 4294967295], got "${text}"`);
  }
  return Number(text);
}

async function runModels(options: ModelsOptions): Promise<void> {
  const { join } = await import('node:path');
  const gen = await import('../../tiers/cross-encoder/model-gen/index.js');
  const seed = parseSeed(options.seed);
  const names =
    options.only === undefined
      ? [...gen.BENCHMARK_PRESETS]
      : options.only
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  if (names.length === 0) throw new InvalidArgumentError('--only lists no preset');
  for (const name of names) {
    if (!gen.isCrossEncoderPresetName(name)) {
      throw new InvalidArgumentError(
        `unknown preset "${name}" in --only; known: ${Object.keys(gen.CROSS_ENCODER_PRESETS).join(', ')}`,
      );
    }
  }
  process.stdout.write(`writing ${names.length} cross-encoder(s) to ${options.out}: ${gen.SPEED_SHAPE_NOTICE}\n`);
  for (const name of names as (keyof typeof gen.CROSS_ENCODER_PRESETS)[]) {
    const info = await gen.writeCrossEncoderModelDir(join(options.out, name), name, {
      seed,
      ...(options.tokenizer !== undefined ? { tokenizerJsonPath: options.tokenizer } : {}),
    });
    process.stdout.write(
      `  ${name}: ${info.dir} (onnx ${(info.onnxBytes / 1e6).toFixed(1)} MB, ${info.parameters.toLocaleString('en-US')} params, ` +
        `seed ${info.seed}, generated in ${(info.generationMs / 1000).toFixed(2)} s, sha256 ${info.onnxSha256.slice(0, 16)}…)\n`,
    );
  }
}

export function register(program: Command): void {
  program
    .command('models')
    .description(
      'Write BERT-architecture ONNX cross-encoders with seeded random weights (speed/shape models, NOT relevance models) ' +
        'as Hugging Face folders: DIR/tinybert-l2/ and DIR/minilm-l6/.',
    )
    .option('--out <dir>', 'output folder (git-ignored default)', DEFAULT_MODELS_OUT)
    .option(
      '--only <presets>',
      'comma-separated presets (default tinybert-l2,minilm-l6; also tiny and the tiny-* test variants)',
    )
    .option('--seed <n>', 'weight seed; same seed gives byte-identical models', '42')
    .option('--tokenizer <path>', "tokenizer.json to copy (default: the package's bert-base-uncased tokenizer)")
    .action(async (options: ModelsOptions) => {
      await runModels(options);
    });
}
