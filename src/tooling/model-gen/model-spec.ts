/**
 * Shapes of the generated cross-encoders. Every model built from these is a SPEED/SHAPE model:
 * a real architecture (BERT, RoBERTa / XLM-RoBERTa, ModernBERT, DeBERTa-v2/v3) at real sizes with
 * seeded random weights. Its scores mean nothing; it is NOT a relevance model and must never be
 * presented as one.
 */
import { InvalidArgumentError } from '../../errors.js';
import { type CrossEncoderModelSpec, type InputDtype, MODEL_FAMILIES, POSITION_IDS } from './spec-types.js';
import {
  FAMILY_PRESETS,
  type FamilyPresetName,
  HEADS,
  type HeadName,
  headOutputs,
  isHeadName,
} from './family-presets.js';

export const SPEED_SHAPE_NOTICE = 'speed/shape model, random weights, NOT a relevance model';

export {
  type CrossEncoderDefect,
  type CrossEncoderModelSpec,
  type CrossEncoderOutputSpec,
  type InputDtype,
  MODEL_FAMILIES,
  type ModelFamily,
  POSITION_IDS,
  type ProblemType,
} from './spec-types.js';

const BERT_VOCAB = 30522;

const base = {
  vocabSize: BERT_VOCAB,
  maxPositionEmbeddings: 512,
  typeVocabSize: 2,
  tokenTypeInput: true,
  outputs: [{ name: 'logits', size: 1 }],
  layerNormEps: 1e-12,
  initStd: 'fan-in',
} as const satisfies Partial<CrossEncoderModelSpec>;

const tiny = {
  ...base,
  name: 'tiny',
  numLayers: 1,
  hiddenSize: 32,
  numHeads: 2,
  intermediateSize: 64,
  description: 'test model: 1 layer, hidden 32, bert-base-uncased vocabulary (speed/shape only)',
} as const satisfies CrossEncoderModelSpec;

/** Named specs. The first two are the benchmark sizes; the `tiny*` ones are for tests. */
export const CROSS_ENCODER_PRESETS = {
  'tinybert-l2': {
    ...base,
    name: 'tinybert-l2',
    numLayers: 2,
    hiddenSize: 128,
    numHeads: 2,
    intermediateSize: 512,
    description: 'sizes of cross-encoder/ms-marco-TinyBERT-L-2-v2 (speed/shape only, random weights)',
  },
  'minilm-l6': {
    ...base,
    name: 'minilm-l6',
    numLayers: 6,
    hiddenSize: 384,
    numHeads: 12,
    intermediateSize: 1536,
    description: 'sizes of cross-encoder/ms-marco-MiniLM-L-6-v2 (speed/shape only, random weights)',
  },
  tiny,
  'tiny-no-token-type': {
    ...tiny,
    name: 'tiny-no-token-type',
    tokenTypeInput: false,
    typeVocabSize: 1,
    description: 'tiny, RoBERTa-like: no token_type_ids input',
  },
  'tiny-two-logits': {
    ...tiny,
    name: 'tiny-two-logits',
    outputs: [{ name: 'logits', size: 2 }],
    description: 'tiny with logits [batch, 2] (class 1 vs class 0)',
  },
  'tiny-multi-signal': {
    ...tiny,
    name: 'tiny-multi-signal',
    outputs: [
      { name: 'relevant', size: 1 },
      { name: 'evidence', size: 1 },
      { name: 'contradicts_premise', size: 1 },
      { name: 'injection', size: 1 },
    ],
    description: 'tiny with four named [batch, 1] outputs (multi-signal heads)',
  },
  'tiny-three-logits': {
    ...tiny,
    name: 'tiny-three-logits',
    outputs: [{ name: 'logits', size: 3 }],
    description: 'NON-CONFORMING: single output logits [batch, 3] (the contract accepts 1 or 2)',
  },
  'tiny-int32-input-ids': {
    ...tiny,
    name: 'tiny-int32-input-ids',
    defect: 'input-ids-int32',
    description: 'NON-CONFORMING: input_ids is int32 (the contract requires int64)',
  },
  'tiny-no-input-ids': {
    ...tiny,
    name: 'tiny-no-input-ids',
    defect: 'no-input-ids',
    description: 'NON-CONFORMING: token ids come in as `tokens`; there is no input_ids',
  },
} as const satisfies Record<string, CrossEncoderModelSpec>;

export type CrossEncoderPresetName = keyof typeof CROSS_ENCODER_PRESETS;

/** Every preset name the generator knows: the BERT presets above and the family presets. */
export type ModelPresetName = CrossEncoderPresetName | FamilyPresetName;

/** The presets the `models` CLI writes by default. */
export const BENCHMARK_PRESETS: readonly CrossEncoderPresetName[] = ['tinybert-l2', 'minilm-l6'];

export function isCrossEncoderPresetName(name: string): name is CrossEncoderPresetName {
  return Object.hasOwn(CROSS_ENCODER_PRESETS, name);
}

export function isFamilyPresetName(name: string): name is FamilyPresetName {
  return Object.hasOwn(FAMILY_PRESETS, name);
}

export function isModelPresetName(name: string): name is ModelPresetName {
  return isCrossEncoderPresetName(name) || isFamilyPresetName(name);
}

/** All preset names, BERT presets first. */
export function modelPresetNames(): ModelPresetName[] {
  return [
    ...(Object.keys(CROSS_ENCODER_PRESETS) as CrossEncoderPresetName[]),
    ...(Object.keys(FAMILY_PRESETS) as FamilyPresetName[]),
  ];
}

/** A preset by name, or a caller's spec after validation. */
export function resolveCrossEncoderSpec(presetOrSpec: string | CrossEncoderModelSpec): CrossEncoderModelSpec {
  if (typeof presetOrSpec === 'string') {
    if (isCrossEncoderPresetName(presetOrSpec)) return CROSS_ENCODER_PRESETS[presetOrSpec];
    if (isFamilyPresetName(presetOrSpec)) return FAMILY_PRESETS[presetOrSpec];
    throw new InvalidArgumentError(
      `unknown cross-encoder preset "${presetOrSpec}"; known: ${modelPresetNames().join(', ')}`,
    );
  }
  validateSpec(presetOrSpec);
  return presetOrSpec;
}

/**
 * Changes to a preset that keep its family, vocabulary and window: test sizes (so tests stay fast
 * while token ids and positions stay real), another head, int32 inputs, extra inputs.
 */
export interface ModelShapeOptions {
  /** num_hidden_layers. */
  readonly layers?: number;
  /** hidden_size. Without `heads`/`intermediate` those are scaled to keep the preset's ratios. */
  readonly hidden?: number;
  /** num_attention_heads. */
  readonly heads?: number;
  /** intermediate_size. */
  readonly intermediate?: number;
  /** Classifier head: relevance (1 logit), nli (3), injection (2). */
  readonly head?: HeadName;
  /** Element type of every integer input (default int64). */
  readonly inputDtype?: InputDtype;
  /** Extra inputs the tokenizer does not produce, e.g. ['position_ids']. */
  readonly extraInputs?: readonly string[];
  /** Whether the graph takes token_type_ids (DeBERTa: optional, type_vocab_size 2 when true). */
  readonly tokenTypeInput?: boolean;
}

/** Largest head count ≤ `preferred` that divides `hidden` with head size ≥ 16 (or 1). */
function defaultHeads(hidden: number, preferred: number): number {
  for (let n = Math.min(preferred, hidden); n > 1; n--) if (hidden % n === 0 && hidden / n >= 16) return n;
  return 1;
}

/** True when the options change nothing. */
export function isEmptyShapeOptions(options: ModelShapeOptions): boolean {
  return Object.values(options).every((v) => v === undefined);
}

/** The spec with `options` applied (validated). */
export function applyShapeOptions(base: CrossEncoderModelSpec, options: ModelShapeOptions): CrossEncoderModelSpec {
  if (isEmptyShapeOptions(options)) return base;
  for (const key of ['layers', 'hidden', 'heads', 'intermediate'] as const) {
    const v = options[key];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) {
      throw new InvalidArgumentError(`${key} must be a positive integer, got ${String(v)}`);
    }
  }
  if (options.head !== undefined && !isHeadName(options.head)) {
    throw new InvalidArgumentError(`unknown head "${String(options.head)}"; known: ${Object.keys(HEADS).join(', ')}`);
  }
  const hidden = options.hidden ?? base.hiddenSize;
  const heads = options.heads ?? (options.hidden === undefined ? base.numHeads : defaultHeads(hidden, base.numHeads));
  const intermediate =
    options.intermediate ??
    (options.hidden === undefined
      ? base.intermediateSize
      : Math.round((hidden * base.intermediateSize) / base.hiddenSize));
  const family = base.family ?? 'bert';
  const tokenTypeInput = options.tokenTypeInput ?? base.tokenTypeInput;
  let typeVocabSize = base.typeVocabSize;
  if (family === 'deberta-v2') typeVocabSize = tokenTypeInput ? Math.max(2, base.typeVocabSize) : 0;
  const head = options.head === undefined ? undefined : HEADS[options.head];
  const sizes = [
    options.layers !== undefined ? `${options.layers} layers` : '',
    options.hidden !== undefined || options.heads !== undefined || options.intermediate !== undefined
      ? `hidden ${hidden}, ${heads} heads, intermediate ${intermediate}`
      : '',
  ].filter((t) => t !== '');
  const spec: CrossEncoderModelSpec = {
    ...base,
    numLayers: options.layers ?? base.numLayers,
    hiddenSize: hidden,
    numHeads: heads,
    intermediateSize: intermediate,
    tokenTypeInput,
    typeVocabSize,
    ...(head !== undefined ? { outputs: headOutputs(head), labels: head.labels } : {}),
    ...(options.inputDtype !== undefined ? { inputDtype: options.inputDtype } : {}),
    ...(options.extraInputs !== undefined ? { extraInputs: options.extraInputs } : {}),
    description:
      sizes.length > 0
        ? `${base.description}; TEST SIZE: ${sizes.join(', ')} (vocabulary and window as the preset)`
        : base.description,
  };
  validateSpec(spec);
  return spec;
}

function positiveInt(spec: CrossEncoderModelSpec, key: keyof CrossEncoderModelSpec): number {
  const value = spec[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(
      `cross-encoder spec "${String(spec.name)}": ${key} must be a positive integer, got ${String(value)}`,
    );
  }
  return value;
}

const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const RESERVED_NAMES = new Set(['input_ids', 'attention_mask', 'token_type_ids', 'tokens']);
const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

function fail(spec: CrossEncoderModelSpec, why: string): never {
  throw new InvalidArgumentError(`cross-encoder spec "${String(spec.name)}": ${why}`);
}

/** Family-specific checks of the optional fields. */
function validateFamilyFields(spec: CrossEncoderModelSpec): void {
  const family = spec.family ?? 'bert';
  if (!MODEL_FAMILIES.includes(family)) fail(spec, `unknown family ${JSON.stringify(family)}`);
  if (spec.inputDtype !== undefined && spec.inputDtype !== 'int64' && spec.inputDtype !== 'int32') {
    fail(spec, `inputDtype must be 'int64' or 'int32', got ${JSON.stringify(spec.inputDtype)}`);
  }
  if (spec.inputDtype === 'int32' && spec.defect === 'input-ids-int32') {
    fail(spec, "defect 'input-ids-int32' and inputDtype 'int32' say the same thing; use one");
  }
  const extra = spec.extraInputs ?? [];
  if (!Array.isArray(extra)) fail(spec, 'extraInputs must be an array of input names');
  const names = new Set(['input_ids', 'attention_mask', 'token_type_ids', 'tokens']);
  for (const name of extra) {
    if (typeof name !== 'string' || !INPUT_NAME.test(name) || names.has(name)) {
      fail(spec, `bad or duplicate extra input name ${JSON.stringify(name)}`);
    }
    names.add(name);
    if (spec.outputs.some((o) => o.name === name)) fail(spec, `extra input "${name}" has an output's name`);
  }
  if (family === 'deberta-v2' && extra.includes(POSITION_IDS)) {
    fail(spec, 'deberta-v2 has no absolute positions; position_ids is not an input it can use');
  }
  if (spec.labels !== undefined) {
    if (spec.outputs.length !== 1 || spec.labels.length !== spec.outputs[0].size) {
      fail(spec, 'labels must name each column of a single output');
    }
    if (
      new Set(spec.labels).size !== spec.labels.length ||
      spec.labels.some((l) => typeof l !== 'string' || l === '')
    ) {
      fail(spec, 'labels must be distinct non-empty strings');
    }
  }
  if (
    spec.problemType !== undefined &&
    !['regression', 'single_label_classification', 'multi_label_classification'].includes(spec.problemType)
  ) {
    fail(spec, `unknown problemType ${JSON.stringify(spec.problemType)}`);
  }
  if (spec.padTokenId !== undefined && !(Number.isSafeInteger(spec.padTokenId) && spec.padTokenId >= 0)) {
    fail(spec, 'padTokenId must be a non-negative integer');
  }
  if (spec.padTokenId !== undefined && spec.padTokenId >= spec.vocabSize) fail(spec, 'padTokenId must be < vocabSize');
  if (family === 'roberta' || family === 'xlm-roberta') {
    // Positions run padding_idx + 1 … padding_idx + S, so the table needs padding_idx + 1 + window rows.
    if (spec.maxPositionEmbeddings < padTokenIdOf(spec) + 2) {
      fail(spec, 'maxPositionEmbeddings must exceed padTokenId + 1 (RoBERTa positions start after padding_idx)');
    }
  }
  if (spec.classifierPooling !== undefined && spec.classifierPooling !== 'cls' && spec.classifierPooling !== 'mean') {
    fail(spec, "classifierPooling must be 'cls' or 'mean'");
  }
  if (spec.ropeTheta !== undefined && !(spec.ropeTheta > 1 && Number.isFinite(spec.ropeTheta))) {
    fail(spec, 'ropeTheta must be a finite number > 1');
  }
  if (family === 'modernbert' && (spec.hiddenSize / spec.numHeads) % 2 !== 0) {
    fail(spec, 'ModernBERT head size (hiddenSize / numHeads) must be even for rotary embeddings');
  }
  if (
    spec.positionBuckets !== undefined &&
    !(Number.isSafeInteger(spec.positionBuckets) && spec.positionBuckets >= 2)
  ) {
    fail(spec, 'positionBuckets must be an integer ≥ 2');
  }
  if (family !== 'bert' && spec.defect !== undefined) fail(spec, 'defects are only generated for the bert family');
  if (family === 'modernbert' && spec.tokenTypeInput)
    fail(spec, 'ModernBERT has no token types (tokenTypeInput must be false)');
}

/** pad_token_id of a spec (family default when unset). */
export function padTokenIdOf(spec: CrossEncoderModelSpec): number {
  if (spec.padTokenId !== undefined) return spec.padTokenId;
  const family = spec.family ?? 'bert';
  if (family === 'roberta' || family === 'xlm-roberta') return 1;
  if (family === 'modernbert') return 50283;
  return 0;
}

export function positionBucketsOf(spec: CrossEncoderModelSpec): number {
  return spec.positionBuckets ?? 256;
}

/** Labels of the single head (or per-output names), as config.json's id2label lists them. */
export function labelNamesOf(spec: CrossEncoderModelSpec): string[] {
  if (spec.labels !== undefined) return [...spec.labels];
  if (spec.outputs.length === 1) return Array.from({ length: spec.outputs[0].size }, (_, i) => `LABEL_${i}`);
  return spec.outputs.flatMap((o) =>
    o.size === 1 ? [o.name] : Array.from({ length: o.size }, (_, i) => `${o.name}_${i}`),
  );
}

/** Names of the graph inputs, in order. */
export function inputNamesOf(spec: CrossEncoderModelSpec): string[] {
  return [
    spec.defect === 'no-input-ids' ? 'tokens' : 'input_ids',
    'attention_mask',
    ...(spec.tokenTypeInput ? ['token_type_ids'] : []),
    ...(spec.extraInputs ?? []),
  ];
}

/** Element type of one graph input. */
export function inputDtypeOf(spec: CrossEncoderModelSpec, input: string): InputDtype {
  if (spec.inputDtype === 'int32') return 'int32';
  if (spec.defect === 'input-ids-int32' && input === 'input_ids') return 'int32';
  return 'int64';
}

function validateSpec(spec: CrossEncoderModelSpec): void {
  if (typeof spec.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(spec.name)) {
    throw new InvalidArgumentError(
      `cross-encoder spec name must be a folder-safe identifier, got ${JSON.stringify(spec.name)}`,
    );
  }
  for (const key of [
    'numLayers',
    'hiddenSize',
    'numHeads',
    'intermediateSize',
    'vocabSize',
    'maxPositionEmbeddings',
  ] as const) {
    positiveInt(spec, key);
  }
  // DeBERTa-v3 has type_vocab_size 0 (no token-type table); every other family adds type 0.
  if (spec.family === 'deberta-v2' && !spec.tokenTypeInput) {
    if (spec.typeVocabSize !== 0 && !(Number.isSafeInteger(spec.typeVocabSize) && spec.typeVocabSize > 0)) {
      fail(spec, 'typeVocabSize must be a non-negative integer');
    }
  } else {
    positiveInt(spec, 'typeVocabSize');
  }
  if (spec.tokenTypeInput && spec.typeVocabSize < 2 && spec.family !== undefined && spec.family !== 'bert') {
    fail(spec, 'a token_type_ids input needs typeVocabSize ≥ 2');
  }
  if (spec.hiddenSize % spec.numHeads !== 0) {
    throw new InvalidArgumentError(
      `cross-encoder spec "${spec.name}": hiddenSize ${spec.hiddenSize} is not divisible by numHeads ${spec.numHeads}`,
    );
  }
  if (!Array.isArray(spec.outputs) || spec.outputs.length === 0) {
    throw new InvalidArgumentError(`cross-encoder spec "${spec.name}": outputs must list at least one head`);
  }
  const seen = new Set<string>();
  for (const out of spec.outputs) {
    if (!OUTPUT_NAME.test(out.name) || RESERVED_NAMES.has(out.name) || seen.has(out.name)) {
      throw new InvalidArgumentError(
        `cross-encoder spec "${spec.name}": bad or duplicate output name ${JSON.stringify(out.name)}`,
      );
    }
    seen.add(out.name);
    if (!Number.isSafeInteger(out.size) || out.size < 1) {
      throw new InvalidArgumentError(
        `cross-encoder spec "${spec.name}": output "${out.name}" size must be a positive integer`,
      );
    }
  }
  if (!(spec.layerNormEps > 0 && spec.layerNormEps < 1)) {
    throw new InvalidArgumentError(`cross-encoder spec "${spec.name}": layerNormEps must be in (0, 1)`);
  }
  if (
    spec.initStd !== 'fan-in' &&
    !(typeof spec.initStd === 'number' && spec.initStd > 0 && Number.isFinite(spec.initStd))
  ) {
    throw new InvalidArgumentError(`cross-encoder spec "${spec.name}": initStd must be 'fan-in' or a positive number`);
  }
  if (spec.defect !== undefined && spec.defect !== 'input-ids-int32' && spec.defect !== 'no-input-ids') {
    throw new InvalidArgumentError(`cross-encoder spec "${spec.name}": unknown defect ${JSON.stringify(spec.defect)}`);
  }
  validateFamilyFields(spec);
}

/** Parameter count (float32 weights) of a spec, for size estimates. Tables of constants (RoPE) are not parameters. */
export function countParameters(spec: CrossEncoderModelSpec): number {
  const h = spec.hiddenSize;
  const i = spec.intermediateSize;
  const heads = spec.outputs.reduce((sum, o) => sum + h * o.size + o.size, 0);
  const family = spec.family ?? 'bert';
  if (family === 'modernbert') {
    // tok_embeddings + norm (no bias); layer 0 has no attn_norm; Wqkv, Wo, Wi (GeGLU, 2·I), mlp Wo: no bias.
    const embeddings = spec.vocabSize * h + h;
    const layer = h + 3 * h * h + h * h + h + 2 * h * i + i * h;
    const head = h * h + h; // head.dense (no bias) + head.norm (no bias)
    // Layer 0 has no attn_norm (−h); final_norm adds h back.
    return embeddings + spec.numLayers * layer - h + h + head + heads;
  }
  const bertLayer = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h;
  const pooler = h * h + h; // BERT pooler, RoBERTa classifier.dense, DeBERTa pooler.dense
  if (family === 'deberta-v2') {
    const embeddings = (spec.vocabSize + spec.typeVocabSize) * h + 2 * h;
    const relative = 2 * positionBucketsOf(spec) * h + 2 * h;
    return embeddings + relative + spec.numLayers * bertLayer + pooler + heads;
  }
  const embeddings = (spec.vocabSize + spec.maxPositionEmbeddings + spec.typeVocabSize) * h + 2 * h;
  return embeddings + spec.numLayers * bertLayer + pooler + heads;
}
