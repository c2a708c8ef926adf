/**
 * Shapes of the generated cross-encoders. Every model built from these is a SPEED/SHAPE model:
 * BERT architecture at real sizes with seeded random weights. Its scores mean nothing; it is NOT
 * a relevance model and must never be presented as one.
 */
import { InvalidArgumentError } from '../../../errors.js';

export const SPEED_SHAPE_NOTICE = 'speed/shape model, random weights, NOT a relevance model';

/** One classifier head: a graph output of shape [batch, size]. */
export interface CrossEncoderOutputSpec {
  readonly name: string;
  readonly size: number;
}

/**
 * Deliberate contract violations, for load-failure tests of the runtime. Each still produces a
 * valid ONNX graph that onnxruntime loads; only the cross-encoder contract is broken.
 */
export type CrossEncoderDefect =
  /** `input_ids` is declared int32 instead of int64. */
  | 'input-ids-int32'
  /** The token-id input is called `tokens`; there is no `input_ids`. */
  | 'no-input-ids';

export interface CrossEncoderModelSpec {
  /** Short name, used as the folder name by the CLI and recorded in config.json. */
  readonly name: string;
  readonly numLayers: number;
  readonly hiddenSize: number;
  readonly numHeads: number;
  readonly intermediateSize: number;
  readonly vocabSize: number;
  readonly maxPositionEmbeddings: number;
  readonly typeVocabSize: number;
  /** Whether the graph takes `token_type_ids` (false: RoBERTa-like, type 0 embedding added). */
  readonly tokenTypeInput: boolean;
  /** Classifier heads. The usual cross-encoder has one: `logits` of size 1. */
  readonly outputs: readonly CrossEncoderOutputSpec[];
  readonly layerNormEps: number;
  /**
   * Standard deviation of the random weights: a number, or 'fan-in' for 1/sqrt(fan_in) per matrix
   * (embeddings: 1). 'fan-in' is the default because with BERT's 0.02 the attention is almost
   * uniform and every pair gets nearly the same logit, which would hide batching mix-ups in tests.
   */
  readonly initStd: number | 'fan-in';
  readonly defect?: CrossEncoderDefect;
  /** One line saying what the preset mimics. */
  readonly description: string;
}

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

/** The presets the `models` CLI writes by default. */
export const BENCHMARK_PRESETS: readonly CrossEncoderPresetName[] = ['tinybert-l2', 'minilm-l6'];

export function isCrossEncoderPresetName(name: string): name is CrossEncoderPresetName {
  return Object.hasOwn(CROSS_ENCODER_PRESETS, name);
}

/** A preset by name, or a caller's spec after validation. */
export function resolveCrossEncoderSpec(presetOrSpec: string | CrossEncoderModelSpec): CrossEncoderModelSpec {
  if (typeof presetOrSpec === 'string') {
    if (!isCrossEncoderPresetName(presetOrSpec)) {
      throw new InvalidArgumentError(
        `unknown cross-encoder preset "${presetOrSpec}"; known: ${Object.keys(CROSS_ENCODER_PRESETS).join(', ')}`,
      );
    }
    return CROSS_ENCODER_PRESETS[presetOrSpec];
  }
  validateSpec(presetOrSpec);
  return presetOrSpec;
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
    'typeVocabSize',
  ] as const) {
    positiveInt(spec, key);
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
}

/** Parameter count (float32 weights) of a spec, for size estimates. */
export function countParameters(spec: CrossEncoderModelSpec): number {
  const h = spec.hiddenSize;
  const i = spec.intermediateSize;
  const embeddings = (spec.vocabSize + spec.maxPositionEmbeddings + spec.typeVocabSize) * h + 2 * h;
  const layer = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h;
  const pooler = h * h + h;
  const heads = spec.outputs.reduce((sum, o) => sum + h * o.size + o.size, 0);
  return embeddings + spec.numLayers * layer + pooler + heads;
}
