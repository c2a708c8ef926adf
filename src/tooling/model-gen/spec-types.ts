/**
 * The spec types of the generated cross-encoders (kept apart from the presets so preset tables
 * can import them without an import cycle).
 */

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

/** Architecture family of the generated graph; each has its exporter's input/output contract. */
export type ModelFamily = 'bert' | 'roberta' | 'xlm-roberta' | 'modernbert' | 'deberta-v2';
export const MODEL_FAMILIES: readonly ModelFamily[] = ['bert', 'roberta', 'xlm-roberta', 'modernbert', 'deberta-v2'];

/** Element type of every integer graph input (ids, mask, token types, position ids). */
export type InputDtype = 'int64' | 'int32';

/** transformers' `problem_type`, written to config.json when set. */
export type ProblemType = 'regression' | 'single_label_classification' | 'multi_label_classification';

/**
 * A graph input the tokenizer does not produce. `position_ids` is used as the position of each
 * token (BERT, RoBERTa, ModernBERT); any other name is a required [batch, sequence] integer input
 * whose values the graph ignores (it exists so a loader's "fill or refuse by name" can be tested).
 */
export const POSITION_IDS = 'position_ids';

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
  /** Architecture family (default 'bert'). */
  readonly family?: ModelFamily;
  /** Element type of the integer inputs (default 'int64'); int32 inputs are cast to int64 inside the graph. */
  readonly inputDtype?: InputDtype;
  /** Extra [batch, sequence] integer inputs, declared after the standard ones (see POSITION_IDS). */
  readonly extraInputs?: readonly string[];
  /** id2label of a single `logits` head (length = its size). Default LABEL_0 … LABEL_{C-1}. */
  readonly labels?: readonly string[];
  /** Written to config.json as `problem_type` when set. */
  readonly problemType?: ProblemType;
  /** pad_token_id; RoBERTa/XLM-R derive positions from it (padding_idx). Default per family. */
  readonly padTokenId?: number;
  /** ModernBERT: pooling before the head (default 'mean', as ModernBERT-large's config). */
  readonly classifierPooling?: 'cls' | 'mean';
  /** ModernBERT: RoPE base (default 160000, global_rope_theta). */
  readonly ropeTheta?: number;
  /** DeBERTa-v2: position_buckets (default 256). */
  readonly positionBuckets?: number;
}
