/**
 * Writes a generated cross-encoder as a Hugging Face–style folder that onnxruntime, the
 * `tokenizers` package and transformers.js can all open:
 *
 *   config.json  tokenizer.json  tokenizer_config.json  special_tokens_map.json  README.md
 *   onnx/model.onnx  (+ onnx/model_O4.onnx, model_qint8_avx512_vnni.onnx, model_quint8_avx2.onnx,
 *   model_quantized.onnx when asked)
 *
 * With `tokenizerDir`, the real tokenizer files of that folder are copied instead and its
 * config.json is merged under the generated one. The model is a SPEED/SHAPE model (real
 * architecture and sizes, seeded random weights). It is NOT a relevance model; config.json,
 * README.md and the ONNX metadata all say so.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { packageRoot } from '../../util/package-root.js';
import { buildCrossEncoderModelProto, normalizeSeed, ONNX_IR_VERSION, ONNX_OPSET } from './bert-onnx.js';
import { adoptRealConfig, configJson, FAMILY_SIMPLIFICATIONS, type RealConfigFields } from './config-json.js';
import {
  applyShapeOptions,
  type CrossEncoderModelSpec,
  countParameters,
  inputDtypeOf,
  inputNamesOf,
  labelNamesOf,
  type ModelPresetName,
  type ModelShapeOptions,
  resolveCrossEncoderSpec,
} from './model-spec.js';
import { encodeOnnxModel, type OnnxModel } from './onnx-proto.js';
import { quantizeDynamic } from './quantize.js';
import { TokenizerSourceError } from './errors.js';

export { TokenizerSourceError } from './errors.js';

/** The WordPiece tokenizer the BERT presets are sized for: bert-base-uncased, shipped in the package (Apache-2.0). */
export function defaultTokenizerJsonPath(): string {
  return join(packageRoot(), 'models', 'tokenizers', 'bert-base-uncased', 'tokenizer.json');
}

/**
 * ONNX files a folder can hold, under the names sentence-transformers / Optimum / transformers.js
 * publish. `fp32` is always written.
 */
export const ONNX_VARIANT_FILES = {
  fp32: 'onnx/model.onnx',
  /** The fp32 graph again: stands in for Optimum's O4 (fp16, fused) file; same bytes as model.onnx. */
  O4: 'onnx/model_O4.onnx',
  /** int8 weights (symmetric, per tensor), uint8 activations: sentence-transformers' AVX512-VNNI file. */
  qint8_avx512_vnni: 'onnx/model_qint8_avx512_vnni.onnx',
  /** uint8 weights (asymmetric, per tensor), uint8 activations: sentence-transformers' AVX2 file. */
  quint8_avx2: 'onnx/model_quint8_avx2.onnx',
  /** int8 weights, as transformers.js' `dtype: 'q8'` file. */
  quantized: 'onnx/model_quantized.onnx',
} as const;

export type OnnxVariant = keyof typeof ONNX_VARIANT_FILES;
export const ONNX_VARIANTS = Object.keys(ONNX_VARIANT_FILES) as OnnxVariant[];

export function isOnnxVariant(name: string): name is OnnxVariant {
  return Object.hasOwn(ONNX_VARIANT_FILES, name);
}

/**
 * Tokenizer files copied from `tokenizerDir` when present. config.json is merged, not copied;
 * README.md is the generator's own.
 */
export const TOKENIZER_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.txt',
  'vocab.json',
  'merges.txt',
  'sentencepiece.bpe.model',
  'spm.model',
] as const;

/**
 * 'tokenizer-json': the fast-tokenizer layout (tokenizer.json + configs).
 * 'vocab-only': the slow-tokenizer layout of cross-encoder/ms-marco-TinyBERT-L-2-v2: vocab.txt +
 * tokenizer_config.json (+ special_tokens_map.json), no tokenizer.json.
 */
export type TokenizerLayout = 'tokenizer-json' | 'vocab-only';

export interface WriteCrossEncoderModelDirOptions extends ModelShapeOptions {
  /** Unsigned 32-bit seed of the random weights (default 42). Same seed → byte-identical model. */
  readonly seed?: number;
  /** tokenizer.json to copy (default: the package's models/tokenizers/bert-base-uncased/tokenizer.json). */
  readonly tokenizerJsonPath?: string;
  /**
   * A real model folder (e.g. shared/tokenizers/roberta-large-mnli): its tokenizer files are
   * copied and its config.json is merged under the generated one; the spec takes its vocabulary,
   * window, pad id, norm eps and labels. Without it, BERT-family presets get the package's
   * bert-base-uncased tokenizer and other families get no tokenizer files.
   */
  readonly tokenizerDir?: string;
  /** Default 'tokenizer-json' ('vocab-only' when tokenizerDir has no tokenizer.json). */
  readonly tokenizerLayout?: TokenizerLayout;
  /** ONNX files to write besides onnx/model.onnx (default none). */
  readonly variants?: readonly OnnxVariant[];
}

export interface CrossEncoderModelDirInfo {
  /** Absolute path of the folder. */
  readonly dir: string;
  /** Absolute path of onnx/model.onnx. */
  readonly modelPath: string;
  /** The spec the graph was built from (after shape options and the real config). */
  readonly spec: CrossEncoderModelSpec;
  readonly seed: number;
  readonly parameters: number;
  readonly onnxBytes: number;
  /** SHA-256 of onnx/model.onnx (hex). */
  readonly onnxSha256: string;
  /** Time spent drawing weights and encoding the ONNX file (quantized variants not included). */
  readonly generationMs: number;
  /** Every ONNX file written: variant → absolute path and size. */
  readonly onnxFiles: Readonly<Partial<Record<OnnxVariant, { readonly path: string; readonly bytes: number }>>>;
  /** Tokenizer files written (relative names). */
  readonly tokenizerFiles: readonly string[];
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

/** Largest token id a tokenizer.json can produce (model vocab and added tokens). */
function maxTokenIdOfTokenizerJson(bytes: Buffer): number {
  const parsed = JSON.parse(bytes.toString('utf8')) as {
    model?: { vocab?: unknown };
    added_tokens?: { id?: unknown }[];
  };
  const vocab = parsed.model?.vocab;
  let maxId = -1;
  if (Array.isArray(vocab)) {
    maxId = vocab.length - 1; // Unigram: [piece, score] pairs, id = index
  } else if (vocab !== null && typeof vocab === 'object') {
    for (const id of Object.values(vocab as Record<string, unknown>))
      if (typeof id === 'number' && id > maxId) maxId = id;
  } else {
    throw new Error('model.vocab is neither a token → id map nor a piece list');
  }
  for (const token of parsed.added_tokens ?? []) if (typeof token.id === 'number' && token.id > maxId) maxId = token.id;
  return maxId;
}

function checkFits(path: string, maxId: number, vocabSize: number): void {
  if (maxId < 0 || maxId >= vocabSize) {
    throw new TokenizerSourceError(
      `${path} has token ids up to ${maxId}, which does not fit the model's vocab_size ${vocabSize}`,
    );
  }
}

async function readTokenizerJson(path: string, vocabSize: number): Promise<Buffer> {
  if (!existsSync(path)) {
    throw new TokenizerSourceError(
      `tokenizer.json not found at ${path}; the generated models use the bert-base-uncased tokenizer shipped in ` +
        'models/tokenizers/bert-base-uncased/ of the package. Pass tokenizerJsonPath (CLI: --tokenizer) to use another copy.',
    );
  }
  const bytes = await readFile(path);
  let maxId: number;
  try {
    maxId = maxTokenIdOfTokenizerJson(bytes);
  } catch (cause) {
    throw new TokenizerSourceError(`${path} is not a usable tokenizer.json: ${(cause as Error).message}`, { cause });
  }
  checkFits(path, maxId, vocabSize);
  return bytes;
}

/** vocab.txt of a WordPiece tokenizer.json: one token per line, line number = id. */
function vocabTxtFromTokenizerJson(bytes: Buffer, path: string): string {
  const parsed = JSON.parse(bytes.toString('utf8')) as { model?: Record<string, unknown> };
  const model = parsed.model ?? {};
  const vocab = model.vocab;
  // Older serialisations omit model.type; WordPiece is the one with a subword prefix and no merges.
  const wordPiece =
    model.type === 'WordPiece' ||
    (model.type === undefined && 'continuing_subword_prefix' in model && !('merges' in model));
  if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab) || !wordPiece) {
    throw new TokenizerSourceError(`${path} is not a WordPiece tokenizer.json; cannot derive vocab.txt from it`);
  }
  const tokens: string[] = [];
  for (const [token, id] of Object.entries(vocab as Record<string, unknown>)) {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0 || tokens[id] !== undefined) {
      throw new TokenizerSourceError(`${path}: vocabulary ids are not a dense 0…n−1 list`);
    }
    tokens[id] = token;
  }
  if (tokens.some((t) => t === undefined) || tokens.length !== Object.keys(vocab).length) {
    throw new TokenizerSourceError(`${path}: vocabulary ids are not a dense 0…n−1 list`);
  }
  return `${tokens.join('\n')}\n`;
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

interface TokenizerPlan {
  readonly files: Map<string, Buffer | string>;
  readonly source: string | null;
  /** 'configs-only': the source folder had no tokenizer.json or vocab.txt; 'none': no source. */
  readonly layout: TokenizerLayout | 'configs-only' | 'none';
}

async function readRealConfig(dir: string): Promise<{ config: Record<string, unknown>; path: string } | undefined> {
  const path = join(dir, 'config.json');
  if (!existsSync(path)) return undefined;
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    return { config: parsed as Record<string, unknown>, path };
  } catch (cause) {
    throw new TokenizerSourceError(`${path} is not a usable config.json: ${(cause as Error).message}`, { cause });
  }
}

/** Reads (and checks against the vocabulary) the tokenizer files the folder will hold. */
async function planTokenizer(
  spec: CrossEncoderModelSpec,
  options: WriteCrossEncoderModelDirOptions,
): Promise<TokenizerPlan> {
  const files = new Map<string, Buffer | string>();
  if (options.tokenizerDir !== undefined) {
    const dir = resolve(options.tokenizerDir);
    if (!existsSync(dir)) throw new TokenizerSourceError(`tokenizer folder not found at ${dir}`);
    const hasJson = existsSync(join(dir, 'tokenizer.json'));
    const hasVocabTxt = existsSync(join(dir, 'vocab.txt'));
    // A folder with neither (only configs, e.g. a checkpoint whose tokenizer.json is not at hand)
    // is copied as it is; the README says the tokenizer is missing.
    const layout: TokenizerPlan['layout'] =
      options.tokenizerLayout ?? (hasJson ? 'tokenizer-json' : hasVocabTxt ? 'vocab-only' : 'configs-only');
    if (layout === 'tokenizer-json' && !hasJson) {
      throw new TokenizerSourceError(
        `no tokenizer.json in ${dir} (use tokenizerLayout 'vocab-only' for vocab.txt folders)`,
      );
    }
    for (const name of TOKENIZER_FILES) {
      if (layout === 'vocab-only' && name === 'tokenizer.json') continue;
      const path = join(dir, name);
      if (!existsSync(path)) continue;
      files.set(name, name === 'tokenizer.json' ? await readTokenizerJson(path, spec.vocabSize) : await readFile(path));
    }
    const vocabTxt = files.get('vocab.txt');
    if (vocabTxt !== undefined) {
      const lines = vocabTxt.toString('utf8').replace(/\n$/, '').split('\n').length;
      checkFits(join(dir, 'vocab.txt'), lines - 1, spec.vocabSize);
    }
    if (layout === 'vocab-only' && vocabTxt === undefined) {
      throw new TokenizerSourceError(`tokenizerLayout 'vocab-only' needs a vocab.txt in ${dir}`);
    }
    return { files, source: dir, layout };
  }
  const family = spec.family ?? 'bert';
  if (family !== 'bert') {
    if (options.tokenizerJsonPath !== undefined) {
      const path = resolve(options.tokenizerJsonPath);
      files.set('tokenizer.json', await readTokenizerJson(path, spec.vocabSize));
      return { files, source: path, layout: 'tokenizer-json' };
    }
    return { files, source: null, layout: 'none' };
  }
  const path = resolve(options.tokenizerJsonPath ?? defaultTokenizerJsonPath());
  const tokenizerJson = await readTokenizerJson(path, spec.vocabSize);
  const layout = options.tokenizerLayout ?? 'tokenizer-json';
  if (layout === 'vocab-only') files.set('vocab.txt', vocabTxtFromTokenizerJson(tokenizerJson, path));
  else files.set('tokenizer.json', tokenizerJson);
  files.set('tokenizer_config.json', `${JSON.stringify(TOKENIZER_CONFIG, null, 2)}\n`);
  files.set('special_tokens_map.json', `${JSON.stringify(SPECIAL_TOKENS_MAP, null, 2)}\n`);
  return { files, source: path, layout };
}

function readme(
  spec: CrossEncoderModelSpec,
  seed: number,
  parameters: number,
  onnxFiles: readonly string[],
  tokenizer: TokenizerPlan,
): string {
  const family = spec.family ?? 'bert';
  const inputs = inputNamesOf(spec)
    .map((n) => `${n} ${inputDtypeOf(spec, n)}`)
    .join(', ');
  return [
    `# ${spec.name}: SPEED/SHAPE MODEL, NOT A RELEVANCE MODEL`,
    '',
    '**speed/shape model: random weights, scores mean nothing.**',
    '',
    `Generated by relevance-gate (\`relevance-gate models\`). ${spec.description}.`,
    '',
    `${family} architecture (${spec.numLayers} layers, hidden ${spec.hiddenSize}, ` +
      `${spec.numHeads} heads, intermediate ${spec.intermediateSize}, vocab ${spec.vocabSize}, ` +
      `${spec.maxPositionEmbeddings} positions; ${parameters.toLocaleString('en-US')} parameters) ` +
      `with seeded random weights (seed ${seed}). Its scores carry no information about relevance. Use it only to measure ` +
      'inference speed and to test input/output shapes, batching and padding.',
    '',
    `- ONNX (opset ${ONNX_OPSET}): ${onnxFiles.join(', ')}; inputs ${inputs} [batch_size, sequence_length]; ` +
      `outputs ${spec.outputs.map((o) => `${o.name} float32 [batch_size, ${o.size}]`).join(', ')}.`,
    `- Labels (id2label): ${labelNamesOf(spec)
      .map((l, i) => `${i}=${l}`)
      .join(', ')}.`,
    `- Simplified: ${FAMILY_SIMPLIFICATIONS[family]}.`,
    tokenizer.layout === 'none'
      ? '- Tokenizer: none included; pass tokenizerDir (CLI --tokenizer-dir) to copy real tokenizer files.'
      : tokenizer.layout === 'configs-only'
        ? `- Tokenizer: NOT included (${tokenizer.source} has no tokenizer.json or vocab.txt); copied ${[...tokenizer.files.keys()].join(', ') || 'no files'}. Add the checkpoint's tokenizer.json before loading.`
        : `- Tokenizer (${tokenizer.layout}): ${[...tokenizer.files.keys()].join(', ')}, copied from ${tokenizer.source}.`,
    ...(spec.defect !== undefined ? [`- DELIBERATELY NON-CONFORMING (${spec.defect}): for load-failure tests.`] : []),
    '',
  ].join('\n');
}

function variantModel(proto: OnnxModel, variant: OnnxVariant): OnnxModel {
  if (variant === 'fp32' || variant === 'O4') return proto;
  return quantizeDynamic(proto, variant === 'quint8_avx2' ? 'quint8' : 'qint8').model;
}

/**
 * Generates a speed/shape cross-encoder (a preset name such as 'tiny', 'tinybert-l2',
 * 'minilm-l6', 'roberta-nli', 'modernbert-reranker', or a full spec) and writes it as a
 * Hugging Face–style folder at `dir` (created if needed; files already there are replaced).
 * Shape options (layers, hidden, heads, intermediate, head, inputDtype, extraInputs,
 * tokenTypeInput) adjust the preset; `tokenizerDir` pairs it with a real tokenizer folder.
 */
export async function writeCrossEncoderModelDir(
  dir: string,
  presetOrSpec: ModelPresetName | CrossEncoderModelSpec,
  options: WriteCrossEncoderModelDirOptions = {},
): Promise<CrossEncoderModelDirInfo> {
  const base = resolveCrossEncoderSpec(presetOrSpec);
  const seed = normalizeSeed(options.seed);
  const presetName = typeof presetOrSpec === 'string' ? presetOrSpec : undefined;
  const variants = ['fp32' as const, ...(options.variants ?? []).filter((v) => v !== 'fp32')];
  for (const v of variants) {
    if (!isOnnxVariant(v)) {
      throw new InvalidArgumentError(`unknown ONNX variant "${String(v)}"; known: ${ONNX_VARIANTS.join(', ')}`);
    }
  }
  if (
    options.tokenizerLayout !== undefined &&
    options.tokenizerLayout !== 'tokenizer-json' &&
    options.tokenizerLayout !== 'vocab-only'
  ) {
    throw new InvalidArgumentError(`tokenizerLayout must be 'tokenizer-json' or 'vocab-only'`);
  }

  const real = options.tokenizerDir === undefined ? undefined : await readRealConfig(resolve(options.tokenizerDir));
  let spec = applyShapeOptions(base, options);
  if (real !== undefined) {
    spec = resolveCrossEncoderSpec(
      adoptRealConfig(spec, real.config as RealConfigFields, real.path, options.head !== undefined),
    );
  }
  const tokenizer = await planTokenizer(spec, options);

  const root = resolve(dir);
  await mkdir(join(root, 'onnx'), { recursive: true });
  // A folder written before with other files (another layout or variants) must not keep stale ones.
  for (const name of TOKENIZER_FILES) if (!tokenizer.files.has(name)) await rm(join(root, name), { force: true });
  for (const v of ONNX_VARIANTS)
    if (!variants.includes(v)) await rm(join(root, ONNX_VARIANT_FILES[v]), { force: true });

  const started = performance.now();
  const proto = buildCrossEncoderModelProto(spec, { seed, preset: presetName ?? spec.name });
  const onnx = encodeOnnxModel(proto);
  const generationMs = performance.now() - started;

  const parameters = countParameters(spec);
  const onnxFiles: Partial<Record<OnnxVariant, { path: string; bytes: number }>> = {};
  for (const variant of variants) {
    const bytes = variant === 'fp32' || variant === 'O4' ? onnx : encodeOnnxModel(variantModel(proto, variant));
    const path = join(root, ONNX_VARIANT_FILES[variant]);
    await writeAtomically(path, bytes);
    onnxFiles[variant] = { path, bytes: bytes.byteLength };
  }
  const config = configJson(spec, {
    seed,
    presetName,
    realConfig: real?.config,
    realConfigPath: real?.path,
    onnxFiles: Object.fromEntries(variants.map((v) => [v, ONNX_VARIANT_FILES[v]])),
    onnx: { opset: ONNX_OPSET, irVersion: ONNX_IR_VERSION },
    tokenizer: { source: tokenizer.source, files: [...tokenizer.files.keys()], layout: tokenizer.layout },
    parameters,
  });
  await writeAtomically(join(root, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  for (const [name, data] of tokenizer.files) await writeAtomically(join(root, name), data);
  await writeAtomically(
    join(root, 'README.md'),
    readme(
      spec,
      seed,
      parameters,
      variants.map((v) => ONNX_VARIANT_FILES[v]),
      tokenizer,
    ),
  );

  return {
    dir: root,
    modelPath: join(root, ONNX_VARIANT_FILES.fp32),
    spec,
    seed,
    parameters,
    onnxBytes: onnx.byteLength,
    onnxSha256: createHash('sha256').update(onnx).digest('hex'),
    generationMs,
    onnxFiles,
    tokenizerFiles: [...tokenizer.files.keys()],
  };
}
