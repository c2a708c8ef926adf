/**
 * config.json of a generated model: the family's transformers config with the generated sizes,
 * merged over a real checkpoint's config when one is given, plus a `relevance_gate` block that
 * says it is a speed/shape model and spells out the graph's input/output contract.
 */
import { InvalidArgumentError } from '../../errors.js';
import {
  type CrossEncoderModelSpec,
  inputDtypeOf,
  inputNamesOf,
  labelNamesOf,
  type ModelFamily,
  padTokenIdOf,
  positionBucketsOf,
  SPEED_SHAPE_NOTICE,
} from './model-spec.js';

/** transformers `model_type` values each family's graph stands for. */
export const FAMILY_MODEL_TYPES: Record<ModelFamily, readonly string[]> = {
  bert: ['bert'],
  roberta: ['roberta', 'xlm-roberta'],
  'xlm-roberta': ['xlm-roberta', 'roberta'],
  modernbert: ['modernbert'],
  'deberta-v2': ['deberta-v2'],
};

const ARCHITECTURE: Record<string, string> = {
  bert: 'BertForSequenceClassification',
  roberta: 'RobertaForSequenceClassification',
  'xlm-roberta': 'XLMRobertaForSequenceClassification',
  modernbert: 'ModernBertForSequenceClassification',
  'deberta-v2': 'DebertaV2ForSequenceClassification',
};

/** What each family's graph simplifies against the checkpoint (also in the README). */
export const FAMILY_SIMPLIFICATIONS: Record<ModelFamily, string> = {
  bert: 'none: the exporter graph of BertForSequenceClassification, unfused',
  roberta: 'none: the exporter graph of RobertaForSequenceClassification, unfused',
  'xlm-roberta': 'none: the exporter graph of XLMRobertaForSequenceClassification, unfused',
  modernbert:
    'every layer attends globally with one RoPE base (the checkpoint alternates 128-token local attention, base 10000, with a global layer every third layer)',
  'deberta-v2':
    'padded query rows are not zeroed (keys are masked, real tokens are unaffected); log-bucket rounding in float32',
};

/** Fields a real config lends to the spec (when it has them). */
export interface RealConfigFields {
  readonly model_type?: unknown;
  readonly vocab_size?: unknown;
  readonly max_position_embeddings?: unknown;
  readonly pad_token_id?: unknown;
  readonly layer_norm_eps?: unknown;
  readonly norm_eps?: unknown;
  readonly type_vocab_size?: unknown;
  readonly id2label?: unknown;
  readonly problem_type?: unknown;
  readonly classifier_pooling?: unknown;
  readonly global_rope_theta?: unknown;
  readonly position_buckets?: unknown;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** id2label of a real config as a list (ids 0…n−1), or null when absent or not dense. */
function realLabels(config: RealConfigFields): string[] | null {
  const map = config.id2label;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return null;
  const entries = Object.entries(map as Record<string, unknown>);
  const labels: string[] = [];
  for (let i = 0; i < entries.length; i++) {
    const label = (map as Record<string, unknown>)[String(i)];
    if (typeof label !== 'string') return null;
    labels.push(label);
  }
  return labels.length > 0 ? labels : null;
}

/**
 * The spec with the real config's vocabulary, window, pad id, norm eps, token types and (unless
 * `keepHead`) labels, so the graph matches the checkpoint the tokenizer files come from.
 */
export function adoptRealConfig(
  spec: CrossEncoderModelSpec,
  config: RealConfigFields,
  source: string,
  keepHead: boolean,
): CrossEncoderModelSpec {
  const family = spec.family ?? 'bert';
  if (typeof config.model_type === 'string' && !FAMILY_MODEL_TYPES[family].includes(config.model_type)) {
    throw new InvalidArgumentError(
      `${source} is a "${config.model_type}" model; spec "${spec.name}" generates the ${family} family ` +
        `(model_type ${FAMILY_MODEL_TYPES[family].join(' or ')})`,
    );
  }
  const eps = typeof config.layer_norm_eps === 'number' ? config.layer_norm_eps : config.norm_eps;
  const labels = keepHead || spec.outputs.length !== 1 ? null : realLabels(config);
  const problem = config.problem_type;
  const typeVocab =
    family === 'deberta-v2' || !isCount(config.type_vocab_size) || config.type_vocab_size < 1
      ? spec.typeVocabSize
      : spec.tokenTypeInput
        ? Math.max(2, config.type_vocab_size)
        : config.type_vocab_size;
  return {
    ...spec,
    ...(isCount(config.vocab_size) && config.vocab_size > 0 ? { vocabSize: config.vocab_size } : {}),
    ...(isCount(config.max_position_embeddings) && config.max_position_embeddings > 0
      ? { maxPositionEmbeddings: config.max_position_embeddings }
      : {}),
    ...(isCount(config.pad_token_id) ? { padTokenId: config.pad_token_id } : {}),
    ...(typeof eps === 'number' && eps > 0 && eps < 1 ? { layerNormEps: eps } : {}),
    typeVocabSize: typeVocab,
    ...(labels !== null ? { labels, outputs: [{ name: spec.outputs[0].name, size: labels.length }] } : {}),
    ...(problem === 'regression' ||
    problem === 'single_label_classification' ||
    problem === 'multi_label_classification'
      ? { problemType: problem }
      : {}),
    ...(family === 'modernbert' && (config.classifier_pooling === 'cls' || config.classifier_pooling === 'mean')
      ? { classifierPooling: config.classifier_pooling }
      : {}),
    ...(family === 'modernbert' && typeof config.global_rope_theta === 'number' && config.global_rope_theta > 1
      ? { ropeTheta: config.global_rope_theta }
      : {}),
    ...(family === 'deberta-v2' && isCount(config.position_buckets) && config.position_buckets >= 2
      ? { positionBuckets: config.position_buckets }
      : {}),
  };
}

/** The family's own config fields for a spec (what transformers would save for these sizes). */
function familyConfig(spec: CrossEncoderModelSpec): Record<string, unknown> {
  const family = spec.family ?? 'bert';
  const common = {
    hidden_size: spec.hiddenSize,
    num_hidden_layers: spec.numLayers,
    num_attention_heads: spec.numHeads,
    intermediate_size: spec.intermediateSize,
    vocab_size: spec.vocabSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    pad_token_id: padTokenIdOf(spec),
    initializer_range: 0.02,
    torch_dtype: 'float32',
  };
  if (family === 'modernbert') {
    return {
      ...common,
      attention_bias: false,
      classifier_activation: 'gelu',
      classifier_bias: false,
      classifier_pooling: spec.classifierPooling ?? 'mean',
      global_attn_every_n_layers: 1,
      global_rope_theta: spec.ropeTheta ?? 160000,
      hidden_activation: 'gelu',
      layer_norm_eps: spec.layerNormEps,
      norm_eps: spec.layerNormEps,
      mlp_bias: false,
      norm_bias: false,
      cls_token_id: 50281,
      sep_token_id: 50282,
      bos_token_id: 50281,
      eos_token_id: 50282,
    };
  }
  const bertLike = {
    ...common,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    type_vocab_size: spec.typeVocabSize,
    layer_norm_eps: spec.layerNormEps,
  };
  if (family === 'deberta-v2') {
    return {
      ...bertLike,
      max_relative_positions: -1,
      norm_rel_ebd: 'layer_norm',
      pooler_dropout: 0,
      pooler_hidden_act: 'gelu',
      pooler_hidden_size: spec.hiddenSize,
      pos_att_type: ['p2c', 'c2p'],
      position_biased_input: false,
      position_buckets: positionBucketsOf(spec),
      relative_attention: true,
      share_att_key: true,
    };
  }
  if (family === 'roberta' || family === 'xlm-roberta') {
    return { ...bertLike, bos_token_id: 0, eos_token_id: 2, position_embedding_type: 'absolute' };
  }
  return { ...bertLike, position_embedding_type: 'absolute' };
}

export interface ConfigJsonContext {
  readonly seed: number;
  readonly presetName: string | undefined;
  /** The real config.json merged under the generated fields, if any. */
  readonly realConfig: Record<string, unknown> | undefined;
  readonly realConfigPath: string | undefined;
  /** variant → file under the folder, e.g. { fp32: 'onnx/model.onnx' }. */
  readonly onnxFiles: Record<string, string>;
  readonly onnx: { readonly opset: number; readonly irVersion: number };
  readonly tokenizer: { readonly source: string | null; readonly files: readonly string[]; readonly layout: string };
  readonly parameters: number;
}

export function configJson(spec: CrossEncoderModelSpec, context: ConfigJsonContext): Record<string, unknown> {
  const family = spec.family ?? 'bert';
  const labels = labelNamesOf(spec);
  const real = context.realConfig ?? {};
  const modelType = typeof real.model_type === 'string' ? real.model_type : family;
  return {
    ...familyConfig(spec),
    ...real,
    ...familyConfig(spec),
    _name_or_path: `relevance-gate/${spec.name}-speed-shape`,
    architectures: [ARCHITECTURE[modelType] ?? ARCHITECTURE[family]],
    model_type: modelType,
    num_labels: labels.length,
    // Older configs (roberta-large-mnli) also carry `_num_labels`; keep it consistent with the head.
    ...('_num_labels' in real ? { _num_labels: labels.length } : {}),
    id2label: Object.fromEntries(labels.map((l, i) => [String(i), l])),
    label2id: Object.fromEntries(labels.map((l, i) => [l, i])),
    ...(spec.problemType !== undefined ? { problem_type: spec.problemType } : {}),
    relevance_gate: {
      kind: SPEED_SHAPE_NOTICE,
      warning: 'speed/shape model: random weights, scores mean nothing. Use it only to measure speed and test shapes.',
      preset: context.presetName ?? null,
      spec_name: spec.name,
      description: spec.description,
      family,
      seed: context.seed,
      init_std: spec.initStd,
      parameters: context.parameters,
      merged_from: context.realConfigPath ?? null,
      simplified: FAMILY_SIMPLIFICATIONS[family],
      inputs: inputNamesOf(spec).map((name) => ({
        name,
        dtype: inputDtypeOf(spec, name),
        shape: ['batch_size', 'sequence_length'],
        ...(name === 'position_ids' ? { note: 'position of each token (not produced by the tokenizer)' } : {}),
        ...(name !== 'position_ids' && (spec.extraInputs ?? []).includes(name)
          ? { note: 'required, values ignored (not produced by the tokenizer)' }
          : {}),
      })),
      outputs: spec.outputs.map((o) => ({ name: o.name, dtype: 'float32', shape: ['batch_size', o.size] })),
      defect: spec.defect ?? null,
      onnx: { files: context.onnxFiles, opset: context.onnx.opset, ir_version: context.onnx.irVersion },
      tokenizer: context.tokenizer,
    },
  };
}
