/**
 * Writes a generated cross-encoder as a Hugging Face–style folder that onnxruntime, the
 * `tokenizers` package and transformers.js can all open:
 *
 *   config.json  tokenizer.json  tokenizer_config.json  special_tokens_map.json  README.md
 *   onnx/model.onnx
 *
 * The model is a SPEED/SHAPE model (real BERT architecture and sizes, seeded random weights).
 * It is NOT a relevance model; config.json, README.md and the ONNX metadata all say so.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RelevanceGateError } from '../../../errors.js';
import { packageRoot } from '../../../util/package-root.js';
import { buildCrossEncoderOnnx, normalizeSeed, ONNX_IR_VERSION, ONNX_OPSET } from './bert-onnx.js';
import {
  countParameters,
  resolveCrossEncoderSpec,
  SPEED_SHAPE_NOTICE,
  type CrossEncoderModelSpec,
  type CrossEncoderPresetName,
} from './model-spec.js';

/** The WordPiece tokenizer the generated models are sized for: bert-base-uncased, shipped in the package (Apache-2.0). */
export function defaultTokenizerJsonPath(): string {
  return join(packageRoot(), 'models', 'tokenizers', 'bert-base-uncased', 'tokenizer.json');
}

/** The tokenizer.json to copy into a model folder is missing or unusable. */
export class TokenizerSourceError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TOKENIZER_SOURCE', message, options);
  }
}

export interface WriteCrossEncoderModelDirOptions {
  /** Unsigned 32-bit seed of the random weights (default 42). Same seed → byte-identical model. */
  readonly seed?: number;
  /** tokenizer.json to copy (default: the package's models/tokenizers/bert-base-uncased/tokenizer.json). */
  readonly tokenizerJsonPath?: string;
}

export interface CrossEncoderModelDirInfo {
  /** Absolute path of the folder. */
  readonly dir: string;
  /** Absolute path of onnx/model.onnx. */
  readonly modelPath: string;
  readonly spec: CrossEncoderModelSpec;
  readonly seed: number;
  readonly parameters: number;
  readonly onnxBytes: number;
  /** SHA-256 of onnx/model.onnx (hex). */
  readonly onnxSha256: string;
  /** Time spent drawing weights and encoding the ONNX file. */
  readonly generationMs: number;
}

const TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  strip_accents: null,
  tokenize_chinese_chars: true,
  clean_up_tokenization_spaces: true,
  model_max_length: 512,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
};

const SPECIAL_TOKENS_MAP = {
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
};

function labelNames(spec: CrossEncoderModelSpec): string[] {
  if (spec.outputs.length === 1) {
    return Array.from({ length: spec.outputs[0].size }, (_, i) => `LABEL_${i}`);
  }
  return spec.outputs.flatMap((o) =>
    o.size === 1 ? [o.name] : Array.from({ length: o.size }, (_, i) => `${o.name}_${i}`),
  );
}

function configJson(
  spec: CrossEncoderModelSpec,
  seed: number,
  presetName: string | undefined,
): Record<string, unknown> {
  const labels = labelNames(spec);
  return {
    _name_or_path: `relevance-gate/${spec.name}-speed-shape`,
    architectures: ['BertForSequenceClassification'],
    model_type: 'bert',
    hidden_size: spec.hiddenSize,
    num_hidden_layers: spec.numLayers,
    num_attention_heads: spec.numHeads,
    intermediate_size: spec.intermediateSize,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    vocab_size: spec.vocabSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    type_vocab_size: spec.typeVocabSize,
    layer_norm_eps: spec.layerNormEps,
    initializer_range: 0.02,
    pad_token_id: 0,
    position_embedding_type: 'absolute',
    num_labels: labels.length,
    id2label: Object.fromEntries(labels.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(labels.map((l, i) => [l, i])),
    torch_dtype: 'float32',
    relevance_gate: {
      kind: SPEED_SHAPE_NOTICE,
      warning: 'Scores from this model are meaningless; use it only to measure speed and test shapes.',
      preset: presetName ?? null,
      spec_name: spec.name,
      description: spec.description,
      seed,
      init_std: spec.initStd,
      inputs: [
        spec.defect === 'no-input-ids' ? 'tokens' : 'input_ids',
        'attention_mask',
        ...(spec.tokenTypeInput ? ['token_type_ids'] : []),
      ],
      input_ids_dtype: spec.defect === 'input-ids-int32' ? 'int32' : 'int64',
      outputs: spec.outputs.map((o) => ({ name: o.name, shape: ['batch_size', o.size] })),
      defect: spec.defect ?? null,
      onnx: { file: 'onnx/model.onnx', opset: ONNX_OPSET, ir_version: ONNX_IR_VERSION },
    },
  };
}

function readme(spec: CrossEncoderModelSpec, seed: number, parameters: number): string {
  const inputs = `${spec.defect === 'no-input-ids' ? 'tokens' : 'input_ids'}, attention_mask${spec.tokenTypeInput ? ', token_type_ids' : ''}`;
  return [
    `# ${spec.name}: SPEED/SHAPE MODEL, NOT A RELEVANCE MODEL`,
    '',
    `Generated by relevance-gate (\`relevance-gate models\`). ${spec.description}.`,
    '',
    `BERT-for-sequence-classification architecture (${spec.numLayers} layers, hidden ${spec.hiddenSize}, ` +
      `${spec.numHeads} heads, intermediate ${spec.intermediateSize}, vocab ${spec.vocabSize}; ${parameters.toLocaleString('en-US')} parameters) ` +
      `with seeded random weights (seed ${seed}). Its scores carry no information about relevance. Use it only to measure ` +
      'inference speed and to test input/output shapes, batching and padding.',
    '',
    `- ONNX: onnx/model.onnx (opset ${ONNX_OPSET}); inputs ${inputs} [batch_size, sequence_length]; ` +
      `outputs ${spec.outputs.map((o) => `${o.name} [batch_size, ${o.size}]`).join(', ')}.`,
    '- Tokenizer: bert-base-uncased WordPiece (tokenizer.json).',
    ...(spec.defect !== undefined ? [`- DELIBERATELY NON-CONFORMING (${spec.defect}): for load-failure tests.`] : []),
    '',
  ].join('\n');
}

async function readTokenizerJson(path: string, vocabSize: number): Promise<Buffer> {
  if (!existsSync(path)) {
    throw new TokenizerSourceError(
      `tokenizer.json not found at ${path}; the generated models use the bert-base-uncased tokenizer shipped in ` +
        'models/tokenizers/bert-base-uncased/ of the package. Pass tokenizerJsonPath (CLI: --tokenizer) to use another copy.',
    );
  }
  const bytes = await readFile(path);
  let maxId = -1;
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as {
      model?: { vocab?: unknown };
      added_tokens?: { id?: unknown }[];
    };
    const vocab = parsed.model?.vocab;
    if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab))
      throw new Error('model.vocab is not a token → id map');
    for (const id of Object.values(vocab as Record<string, unknown>))
      if (typeof id === 'number' && id > maxId) maxId = id;
    for (const token of parsed.added_tokens ?? [])
      if (typeof token.id === 'number' && token.id > maxId) maxId = token.id;
  } catch (cause) {
    throw new TokenizerSourceError(`${path} is not a WordPiece tokenizer.json: ${(cause as Error).message}`, { cause });
  }
  if (maxId < 0 || maxId >= vocabSize) {
    throw new TokenizerSourceError(
      `${path} has token ids up to ${maxId}, which does not fit the model's vocab_size ${vocabSize}`,
    );
  }
  return bytes;
}

/** Writes `path` via a temporary sibling and a rename, so a reader never sees half a file. */
async function writeAtomically(path: string, data: string | Uint8Array): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  try {
    await writeFile(temporary, data);
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

/**
 * Generates a speed/shape cross-encoder (a preset name such as 'tiny', 'tinybert-l2',
 * 'minilm-l6', or a full spec) and writes it as a Hugging Face–style folder at `dir`
 * (created if needed; files already there are replaced).
 */
export async function writeCrossEncoderModelDir(
  dir: string,
  presetOrSpec: CrossEncoderPresetName | CrossEncoderModelSpec,
  options: WriteCrossEncoderModelDirOptions = {},
): Promise<CrossEncoderModelDirInfo> {
  const spec = resolveCrossEncoderSpec(presetOrSpec);
  const seed = normalizeSeed(options.seed);
  const presetName = typeof presetOrSpec === 'string' ? presetOrSpec : undefined;
  const tokenizer = await readTokenizerJson(
    resolve(options.tokenizerJsonPath ?? defaultTokenizerJsonPath()),
    spec.vocabSize,
  );

  const root = resolve(dir);
  await mkdir(join(root, 'onnx'), { recursive: true });

  const started = performance.now();
  const onnx = buildCrossEncoderOnnx(spec, { seed, preset: presetName ?? spec.name });
  const generationMs = performance.now() - started;

  const modelPath = join(root, 'onnx', 'model.onnx');
  const parameters = countParameters(spec);
  await writeAtomically(modelPath, onnx);
  await writeAtomically(join(root, 'config.json'), `${JSON.stringify(configJson(spec, seed, presetName), null, 2)}\n`);
  await writeAtomically(join(root, 'tokenizer.json'), tokenizer);
  await writeAtomically(join(root, 'tokenizer_config.json'), `${JSON.stringify(TOKENIZER_CONFIG, null, 2)}\n`);
  await writeAtomically(join(root, 'special_tokens_map.json'), `${JSON.stringify(SPECIAL_TOKENS_MAP, null, 2)}\n`);
  await writeAtomically(join(root, 'README.md'), readme(spec, seed, parameters));

  return {
    dir: root,
    modelPath,
    spec,
    seed,
    parameters,
    onnxBytes: onnx.byteLength,
    onnxSha256: createHash('sha256').update(onnx).digest('hex'),
    generationMs,
  };
}
