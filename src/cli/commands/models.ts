/**
 * `relevance-gate models --out DIR`: writes the benchmark cross-encoders (tinybert-l2, minilm-l6)
 * as Hugging Face–style folders; `--preset` / `--only` pick others (RoBERTa NLI, XLM-R reranker,
 * ModernBERT reranker, DeBERTa injection classifier, test variants). They are SPEED/SHAPE models
 * (real architectures and sizes, seeded random weights), NOT relevance models.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';

export const DEFAULT_MODELS_OUT = 'models/generated';

interface ModelsOptions {
  out: string;
  only?: string;
  preset?: string;
  seed: string;
  tokenizer?: string;
  tokenizerDir?: string;
  tokenizersRoot?: string;
  tokenizerLayout?: string;
  layers?: string;
  hidden?: string;
  heads?: string;
  intermediate?: string;
  head?: string;
  inputDtype?: string;
  extraInputs?: string;
  tokenTypes?: boolean;
  variants?: string;
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 0xffffffff) {
    throw new InvalidArgumentError(`--seed must be an integer in [0, 4294967295], got "${text}"`);
  }
  return Number(text);
}

function parseSize(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new InvalidArgumentError(`--${flag} must be a positive integer, got "${text}"`);
  }
  return Number(text);
}

function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

async function runModels(options: ModelsOptions): Promise<void> {
  const { join } = await import('node:path');
  const { existsSync } = await import('node:fs');
  const gen = await import('../../tooling/model-gen/index.js');
  const seed = parseSeed(options.seed);
  const chosen = [...list(options.only), ...list(options.preset)];
  if ((options.only !== undefined || options.preset !== undefined) && chosen.length === 0) {
    throw new InvalidArgumentError('--only / --preset lists no preset');
  }
  const names = chosen.length === 0 ? [...gen.BENCHMARK_PRESETS] : [...new Set(chosen)];
  for (const name of names) {
    if (!gen.isModelPresetName(name)) {
      throw new InvalidArgumentError(`unknown preset "${name}"; known: ${gen.modelPresetNames().join(', ')}`);
    }
  }
  if (options.head !== undefined && !gen.isHeadName(options.head)) {
    throw new InvalidArgumentError(`unknown --head "${options.head}"; known: ${Object.keys(gen.HEADS).join(', ')}`);
  }
  if (options.inputDtype !== undefined && options.inputDtype !== 'int64' && options.inputDtype !== 'int32') {
    throw new InvalidArgumentError(`--input-dtype must be int64 or int32, got "${options.inputDtype}"`);
  }
  if (
    options.tokenizerLayout !== undefined &&
    options.tokenizerLayout !== 'tokenizer-json' &&
    options.tokenizerLayout !== 'vocab-only'
  ) {
    throw new InvalidArgumentError(`--tokenizer-layout must be tokenizer-json or vocab-only`);
  }
  const variantNames = options.variants === 'all' ? gen.ONNX_VARIANTS : list(options.variants);
  for (const v of variantNames) {
    if (!gen.isOnnxVariant(v)) {
      throw new InvalidArgumentError(
        `unknown variant "${v}" in --variants; known: all, ${gen.ONNX_VARIANTS.join(', ')}`,
      );
    }
  }
  const shape = {
    layers: parseSize('layers', options.layers),
    hidden: parseSize('hidden', options.hidden),
    heads: parseSize('heads', options.heads),
    intermediate: parseSize('intermediate', options.intermediate),
    head: options.head as keyof typeof gen.HEADS | undefined,
    inputDtype: options.inputDtype as 'int64' | 'int32' | undefined,
    extraInputs: options.extraInputs === undefined ? undefined : list(options.extraInputs),
    tokenTypeInput: options.tokenTypes,
  };

  process.stdout.write(`writing ${names.length} cross-encoder(s) to ${options.out}: ${gen.SPEED_SHAPE_NOTICE}\n`);
  for (const name of names) {
    if (!gen.isModelPresetName(name)) continue;
    let tokenizerDir = options.tokenizerDir;
    if (tokenizerDir === undefined && options.tokenizersRoot !== undefined && gen.isFamilyPresetName(name)) {
      const paired = join(options.tokenizersRoot, gen.PAIRED_TOKENIZER_FOLDER[name]);
      if (existsSync(paired)) tokenizerDir = paired;
      else process.stdout.write(`  ${name}: no ${paired}; writing it without tokenizer files\n`);
    }
    const info = await gen.writeCrossEncoderModelDir(join(options.out, name), name, {
      seed,
      ...shape,
      ...(options.tokenizer !== undefined ? { tokenizerJsonPath: options.tokenizer } : {}),
      ...(tokenizerDir !== undefined ? { tokenizerDir } : {}),
      ...(options.tokenizerLayout !== undefined
        ? { tokenizerLayout: options.tokenizerLayout as 'tokenizer-json' | 'vocab-only' }
        : {}),
      variants: variantNames as (keyof typeof gen.ONNX_VARIANT_FILES)[],
    });
    const extra = Object.keys(info.onnxFiles).length > 1 ? `, files ${Object.keys(info.onnxFiles).join('/')}` : '';
    process.stdout.write(
      `  ${name}: ${info.dir} (${info.spec.family ?? 'bert'}, onnx ${(info.onnxBytes / 1e6).toFixed(1)} MB, ` +
        `${info.parameters.toLocaleString('en-US')} params, seed ${info.seed}, generated in ${(info.generationMs / 1000).toFixed(2)} s, ` +
        `sha256 ${info.onnxSha256.slice(0, 16)}…${extra}; tokenizer: ${info.tokenizerFiles.length > 0 ? info.tokenizerFiles.join(', ') : 'none'})\n`,
    );
  }
}

export function register(program: Command): void {
  program
    .command('models')
    .description(
      'Write ONNX cross-encoders with seeded random weights (speed/shape models, NOT relevance models: scores mean nothing) ' +
        'as Hugging Face folders. Default: DIR/tinybert-l2/ and DIR/minilm-l6/ (BERT).',
    )
    .option('--out <dir>', 'output folder (git-ignored default)', DEFAULT_MODELS_OUT)
    .option(
      '--only <presets>',
      'comma-separated presets (default tinybert-l2,minilm-l6; also tiny, the tiny-* test variants and the family presets)',
    )
    .option(
      '--preset <presets>',
      'comma-separated presets, as --only: roberta-nli, xlmr-reranker, modernbert-reranker, deberta-injection, tinybert-l2, …',
    )
    .option('--seed <n>', 'weight seed; same seed gives byte-identical models', '42')
    .option('--tokenizer <path>', "tokenizer.json to copy (default: the package's bert-base-uncased tokenizer)")
    .option(
      '--tokenizer-dir <dir>',
      'real model folder whose tokenizer files are copied and whose config.json is merged',
    )
    .option(
      '--tokenizers-root <dir>',
      'folder of real tokenizer folders (e.g. ../shared/tokenizers); each family preset takes its paired one',
    )
    .option('--tokenizer-layout <layout>', 'tokenizer-json (default) or vocab-only (vocab.txt, no tokenizer.json)')
    .option('--layers <n>', 'num_hidden_layers (test size)')
    .option('--hidden <n>', 'hidden_size (test size; heads and intermediate follow unless given)')
    .option('--heads <n>', 'num_attention_heads')
    .option('--intermediate <n>', 'intermediate_size')
    .option('--head <name>', 'classifier head: relevance (1 logit), nli (3), injection (2)')
    .option('--input-dtype <dtype>', 'int64 (default) or int32 for every integer input')
    .option('--extra-inputs <names>', 'extra inputs the tokenizer does not produce, e.g. position_ids')
    .option('--token-types', 'give the graph a token_type_ids input (DeBERTa: optional)')
    .option('--variants <list>', 'extra ONNX files: all, or O4,qint8_avx512_vnni,quint8_avx2,quantized')
    .action(async (options: ModelsOptions) => {
      await runModels(options);
    });
}
