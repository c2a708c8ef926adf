/**
 * config.json → the graph builder's spec, for the architectures the importer builds: BERT
 * (`model_type` bert: BertModel, BertForSequenceClassification, sentence-transformers BERT
 * bi-encoders) with absolute positions and the exact (erf) GELU. Anything else is refused with
 * UnsupportedArchitectureError naming the export route.
 */
import type { CrossEncoderModelSpec } from '../model-gen/model-spec.js';
import { EXPORT_ROUTE, ModelConfigError, UnsupportedArchitectureError } from './errors.js';

/** transformers `model_type` values the importer builds. */
export const IMPORTABLE_MODEL_TYPES: readonly string[] = ['bert'];

/** The size fields the graph needs, by config.json key. */
const SIZE_FIELDS = [
  'num_hidden_layers',
  'hidden_size',
  'num_attention_heads',
  'intermediate_size',
  'vocab_size',
  'max_position_embeddings',
] as const;

export interface ConfigSummary {
  readonly modelType: string;
  readonly architectures: readonly string[];
}

export function configSummary(config: Readonly<Record<string, unknown>>): ConfigSummary {
  return {
    modelType: typeof config.model_type === 'string' ? config.model_type : '',
    architectures: Array.isArray(config.architectures)
      ? config.architectures.filter((a): a is string => typeof a === 'string')
      : [],
  };
}

/** A folder-safe spec name from any text. */
function specName(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned === '' ? 'imported' : cleaned;
}

/**
 * The spec of a BERT checkpoint's graph with `labels` logits (the cross-encoder head; ignored by a
 * bi-encoder, which stops at the encoder). `configPath` names the file in errors.
 */
export function bertSpecFromConfig(
  config: Readonly<Record<string, unknown>>,
  configPath: string,
  name: string,
  labels: number,
): CrossEncoderModelSpec {
  const { modelType, architectures } = configSummary(config);
  if (!IMPORTABLE_MODEL_TYPES.includes(modelType)) {
    throw new UnsupportedArchitectureError(
      `${configPath}: model_type ${JSON.stringify(config.model_type ?? null)}` +
        `${architectures.length > 0 ? ` (${architectures.join(', ')})` : ''} is not one the importer builds ` +
        `(${IMPORTABLE_MODEL_TYPES.join(', ')}); ${EXPORT_ROUTE}`,
    );
  }
  const act = config.hidden_act ?? 'gelu';
  if (act !== 'gelu') {
    throw new UnsupportedArchitectureError(
      `${configPath}: hidden_act ${JSON.stringify(act)} is not supported (the graph uses the exact erf GELU, "gelu"); ${EXPORT_ROUTE}`,
    );
  }
  const positions = config.position_embedding_type ?? 'absolute';
  if (positions !== 'absolute') {
    throw new UnsupportedArchitectureError(
      `${configPath}: position_embedding_type ${JSON.stringify(positions)} is not supported (absolute only); ${EXPORT_ROUTE}`,
    );
  }
  const sizes: Record<string, number> = {};
  for (const key of SIZE_FIELDS) {
    const value = config[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ModelConfigError(
        `${configPath}: ${key} must be a positive integer, got ${JSON.stringify(value ?? null)}`,
      );
    }
    sizes[key] = value;
  }
  const typeVocab = config.type_vocab_size ?? 2;
  if (typeof typeVocab !== 'number' || !Number.isSafeInteger(typeVocab) || typeVocab < 1) {
    throw new ModelConfigError(
      `${configPath}: type_vocab_size must be a positive integer, got ${JSON.stringify(typeVocab)}`,
    );
  }
  const eps = config.layer_norm_eps ?? 1e-12;
  if (typeof eps !== 'number' || !(eps > 0 && eps < 1)) {
    throw new ModelConfigError(`${configPath}: layer_norm_eps must be a number in (0, 1), got ${JSON.stringify(eps)}`);
  }
  if (sizes.hidden_size! % sizes.num_attention_heads! !== 0) {
    throw new ModelConfigError(
      `${configPath}: hidden_size ${sizes.hidden_size} is not divisible by num_attention_heads ${sizes.num_attention_heads}`,
    );
  }
  const pad = config.pad_token_id;
  return {
    name: specName(name),
    family: 'bert',
    numLayers: sizes.num_hidden_layers!,
    hiddenSize: sizes.hidden_size!,
    numHeads: sizes.num_attention_heads!,
    intermediateSize: sizes.intermediate_size!,
    vocabSize: sizes.vocab_size!,
    maxPositionEmbeddings: sizes.max_position_embeddings!,
    typeVocabSize: typeVocab,
    tokenTypeInput: true,
    outputs: [{ name: 'logits', size: labels }],
    layerNormEps: eps,
    // Only a head the checkpoint lacks is drawn; fan-in keeps its logits O(1).
    initStd: 'fan-in',
    ...(typeof pad === 'number' && Number.isSafeInteger(pad) && pad >= 0 && pad < sizes.vocab_size!
      ? { padTokenId: pad }
      : {}),
    description: `imported from ${name} (${modelType}${architectures.length > 0 ? `, ${architectures.join(', ')}` : ''})`,
  };
}
