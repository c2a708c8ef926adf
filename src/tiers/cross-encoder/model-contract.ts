/**
 * The cross-encoder model contract, discovered at load from the ONNX session's metadata and the
 * folder's config.json (model-config.ts).
 *
 * Inputs ([batch, seq], each int64 or int32: the element type is read from the metadata and fed as
 * declared): `input_ids` and `attention_mask` are required; `token_type_ids` is optional (RoBERTa,
 * XLM-R, ModernBERT, DeBERTa-v3 exports lack it); `position_ids` is optional and filled the way the
 * export expects, decided by config.json `model_type`: 0…S−1 for absolute-position models (BERT,
 * ModernBERT, DeBERTa, …), `padding_idx + 1 + i` for RoBERTa-style models (padding_idx =
 * `pad_token_id`, pads get padding_idx). Any other input is refused by name (we could not fill it).
 *
 * Outputs (float32, first dim = batch):
 *  - one output [b] or [b,1] without a meaningful `id2label` → its value is the logit (signal `relevant`);
 *  - one output [b,2] without a meaningful `id2label` (HF's LABEL_0/LABEL_1) → logit = class 1 − class 0
 *    (a 2-way softmax relevance head; sigmoid of the difference is the softmax probability of class 1);
 *  - one output [b,C] with a meaningful `id2label` (or C ≥ 3 with any id2label of C labels) → one
 *    signal per label, in label-id order, named as config.json spells them; probabilities are the
 *    softmax over the labels (C ≥ 2), or a sigmoid per label (C = 1, or `problem_type`
 *    multi_label_classification / regression);
 *  - several outputs, each [b] or [b,1] → one named signal per output (multi-signal heads).
 * Anything else fails at load with a ModelContractError saying what was expected and what was found.
 */
import { RELEVANT } from '../../signals.js';
import { sigmoid } from '../../util/sigmoid.js';
import { ModelContractError } from './errors.js';
import type { ModelConfigFields } from './model-config.js';

/** The subset of onnxruntime's value metadata we read (kept structural so tests need no session). */
export interface ValueMetadataLike {
  readonly name: string;
  readonly isTensor: boolean;
  readonly type?: string;
  readonly shape?: ReadonlyArray<number | string>;
}

/** Element type of an integer input, as the graph declares it. */
export type IntegerInputType = 'int64' | 'int32';

/** How probabilities come from logits. */
export type HeadActivation = 'sigmoid' | 'softmax';

export type OutputHead =
  /** One value per pair at `name`, `width` 1 (shape [b] or [b,1]). */
  | { readonly kind: 'single'; readonly name: string }
  /** [b,2]: logit = out[:,1] − out[:,0]. */
  | { readonly kind: 'binary'; readonly name: string }
  /** Several [b]/[b,1] outputs, one signal each, in this order. */
  | { readonly kind: 'multi'; readonly names: readonly string[] }
  /** One [b,width] output, one signal per config.json label (label-id order). */
  | {
      readonly kind: 'labels';
      readonly name: string;
      readonly width: number;
      readonly activation: HeadActivation;
    }
  /** A bi-encoder's [b,width] vector per text at `name` (the embedding tier; no signals). */
  | { readonly kind: 'vector'; readonly name: string; readonly width: number };

/**
 * How `position_ids` is filled: 'sequential' = 0…S−1 (BERT, ModernBERT, DeBERTa); 'padding-offset'
 * = padding_idx + 1 + i for tokens and padding_idx for pads (RoBERTa's create_position_ids_from_input_ids).
 */
export type PositionScheme = 'sequential' | 'padding-offset';

export interface ModelContract {
  readonly inputIds: string;
  readonly attentionMask: string;
  /** null when the model has no token_type_ids input. */
  readonly tokenTypeIds: string | null;
  /** null when the model has no position_ids input. */
  readonly positionIds: string | null;
  readonly positionScheme: PositionScheme;
  /** Id written into padded `input_ids` slots and RoBERTa's padding_idx: config.json pad_token_id, default 0. */
  readonly padTokenId: number;
  /** Element type of every input the graph declares, by name. */
  readonly inputTypes: Readonly<Record<string, IntegerInputType>>;
  readonly head: OutputHead;
  /**
   * Signal names, one per logit column: ['relevant'] for single/binary heads, output names for
   * multi, config.json labels for labelled heads; empty for a vector head (its columns are the
   * vector's `width` values).
   */
  readonly signalNames: readonly string[];
  /** How probabilities are computed from the logit columns. */
  readonly activation: HeadActivation;
}

export const INPUT_IDS = 'input_ids';
export const ATTENTION_MASK = 'attention_mask';
export const TOKEN_TYPE_IDS = 'token_type_ids';
export const POSITION_IDS = 'position_ids';
const KNOWN_INPUTS = new Set([INPUT_IDS, ATTENTION_MASK, TOKEN_TYPE_IDS, POSITION_IDS]);

/**
 * model_type values whose embeddings derive positions from padding_idx (transformers'
 * `create_position_ids_from_input_ids`): their exported `position_ids` start at padding_idx + 1.
 */
export const PADDING_OFFSET_MODEL_TYPES: readonly string[] = [
  'roberta',
  'xlm-roberta',
  'xlm-roberta-xl',
  'camembert',
  'data2vec-text',
  'longformer',
  'mpnet',
  'xmod',
  'roberta-prelayernorm',
];

const EXPECTED =
  'expected inputs input_ids + attention_mask (+ optional token_type_ids, position_ids), int64 or int32 [batch, sequence]; ' +
  'outputs: one float32 [batch,C] (e.g. "logits"; C > 2 needs config.json id2label), or several float32 [batch,1]/[batch] named outputs';

function describe(values: readonly ValueMetadataLike[]): string {
  return values
    .map((v) => (v.isTensor ? `${v.name}: ${v.type ?? '?'} [${(v.shape ?? []).join(', ')}]` : `${v.name}: non-tensor`))
    .join('; ');
}

/** Width of the second dim: 1 for [b] or [b,1], C for [b,C], a string for symbolic, null for other ranks. */
function labelWidth(v: ValueMetadataLike): number | string | null {
  const shape = v.shape ?? [];
  if (shape.length === 1) return 1;
  if (shape.length === 2) return shape[1];
  return null;
}

/** transformers' default labels (LABEL_0, LABEL_1, …): they name nothing. */
export function isDefaultLabels(labels: readonly string[]): boolean {
  return labels.every((label, i) => label === `LABEL_${i}`);
}

/** Reads the head of a single output; `fail` throws. */
function singleOutputHead(
  out: ValueMetadataLike,
  config: ModelConfigFields,
  fail: (why: string) => never,
): { head: OutputHead; signalNames: string[]; activation: HeadActivation } {
  const declared = labelWidth(out);
  const labels = config.labels;
  const meaningful = labels !== undefined && !isDefaultLabels(labels);
  if (declared === null || (typeof declared === 'number' && (!Number.isSafeInteger(declared) || declared < 1))) {
    return fail(`output "${out.name}" must be [batch] or [batch,C]`);
  }
  // A symbolic class dimension is sized by config.json's labels (checked again on every run).
  const width = typeof declared === 'number' ? declared : labels?.length;
  if (width === undefined) {
    return fail(
      `output "${out.name}" has a symbolic class dimension "${declared}" and config.json has no id2label${config.labelsProblem !== undefined ? ` (${config.labelsProblem})` : ''}`,
    );
  }
  if (!meaningful && width === 1)
    return { head: { kind: 'single', name: out.name }, signalNames: [RELEVANT], activation: 'sigmoid' };
  if (!meaningful && width === 2 && (labels === undefined || labels.length === 2)) {
    return { head: { kind: 'binary', name: out.name }, signalNames: [RELEVANT], activation: 'sigmoid' };
  }
  if (labels === undefined) {
    return fail(
      `output "${out.name}" has ${width} classes but config.json has no id2label to name them${config.labelsProblem !== undefined ? ` (${config.labelsProblem})` : ''}`,
    );
  }
  if (labels.length !== width) {
    return fail(`config.json id2label has ${labels.length} labels but output "${out.name}" has ${width} classes`);
  }
  const seen = new Set<string>();
  for (const label of labels) {
    if (label.length === 0) fail('config.json id2label has an empty label');
    if (seen.has(label)) fail(`config.json id2label names "${label}" twice`);
    seen.add(label);
  }
  // multi-label (and regression) heads score each label on its own; single-label heads compete.
  const independent =
    width === 1 || config.problemType === 'multi_label_classification' || config.problemType === 'regression';
  const activation: HeadActivation = independent ? 'sigmoid' : 'softmax';
  return { head: { kind: 'labels', name: out.name, width, activation }, signalNames: [...labels], activation };
}

/** The inputs part of a contract (shared by cross-encoders and bi-encoders). */
type InputContract = Omit<ModelContract, 'head' | 'signalNames' | 'activation'>;

/** Reads and checks the inputs; `fail` throws. */
function discoverInputs(
  inputs: readonly ValueMetadataLike[],
  config: ModelConfigFields,
  fail: (why: string) => never,
): InputContract {
  const byName = new Map(inputs.map((v) => [v.name, v]));
  for (const required of [INPUT_IDS, ATTENTION_MASK]) {
    if (!byName.has(required)) fail(`missing required input "${required}"`);
  }
  const inputTypes: Record<string, IntegerInputType> = {};
  for (const v of inputs) {
    if (!KNOWN_INPUTS.has(v.name)) {
      fail(
        `unexpected input "${v.name}" (the loader can fill only input_ids, attention_mask, token_type_ids, position_ids)`,
      );
    }
    if (!v.isTensor || (v.type !== 'int64' && v.type !== 'int32')) {
      fail(`input "${v.name}" must be an int64 or int32 tensor`);
    }
    if (v.shape !== undefined && v.shape.length !== 2) fail(`input "${v.name}" must have rank 2`);
    inputTypes[v.name] = v.type as IntegerInputType;
  }
  const hasPositions = byName.has(POSITION_IDS);
  if (hasPositions && config.modelType === undefined) {
    fail(
      `input "${POSITION_IDS}" needs config.json model_type to be filled the way the export expects ` +
        '(0…S−1 for BERT-style models, padding_idx + 1 + i for RoBERTa-style models)',
    );
  }
  const positionScheme: PositionScheme =
    config.modelType !== undefined && PADDING_OFFSET_MODEL_TYPES.includes(config.modelType)
      ? 'padding-offset'
      : 'sequential';
  return {
    inputIds: INPUT_IDS,
    attentionMask: ATTENTION_MASK,
    tokenTypeIds: byName.has(TOKEN_TYPE_IDS) ? TOKEN_TYPE_IDS : null,
    positionIds: hasPositions ? POSITION_IDS : null,
    positionScheme,
    padTokenId: config.padTokenId ?? 0,
    inputTypes,
  };
}

export function discoverContract(
  inputs: readonly ValueMetadataLike[],
  outputs: readonly ValueMetadataLike[],
  config: ModelConfigFields = {},
): ModelContract {
  const fail = (why: string): never => {
    throw new ModelContractError(
      `${why}; ${EXPECTED}; found inputs {${describe(inputs)}} outputs {${describe(outputs)}}`,
    );
  };
  const inputContract = discoverInputs(inputs, config, fail);

  if (outputs.length === 0) fail('the model has no outputs');
  for (const v of outputs) {
    if (!v.isTensor || v.type !== 'float32') fail(`output "${v.name}" must be a float32 tensor`);
  }

  let head: OutputHead;
  let signalNames: string[];
  let activation: HeadActivation = 'sigmoid';
  if (outputs.length === 1) {
    ({ head, signalNames, activation } = singleOutputHead(outputs[0], config, fail));
  } else {
    for (const out of outputs) {
      if (labelWidth(out) !== 1) fail(`with several outputs, each must be [batch,1] or [batch]; "${out.name}" is not`);
    }
    const names = outputs.map((o) => o.name);
    head = { kind: 'multi', names };
    signalNames = names;
  }
  return { ...inputContract, head, signalNames, activation };
}

/**
 * The contract of a bi-encoder (the embedding tier): the same inputs as a cross-encoder, and a
 * float32 output `output` of shape [batch, dimensions] (a symbolic second dim is checked on every
 * run). Other outputs are ignored (exports often keep token embeddings beside the pooled vector).
 */
export function discoverEmbeddingContract(
  inputs: readonly ValueMetadataLike[],
  outputs: readonly ValueMetadataLike[],
  config: ModelConfigFields,
  output: string,
  dimensions: number,
): ModelContract {
  const expected = `expected inputs input_ids + attention_mask (+ optional token_type_ids, position_ids), int64 or int32 [batch, sequence]; output "${output}": float32 [batch, ${dimensions}]`;
  const fail = (why: string): never => {
    throw new ModelContractError(
      `${why}; ${expected}; found inputs {${describe(inputs)}} outputs {${describe(outputs)}}`,
    );
  };
  const inputContract = discoverInputs(inputs, config, fail);
  const out = outputs.find((v) => v.name === output);
  if (out === undefined) return fail(`the model has no output "${output}"`);
  if (!out.isTensor || out.type !== 'float32') fail(`output "${output}" must be a float32 tensor`);
  const shape = out.shape ?? [];
  if (shape.length !== 2) fail(`output "${output}" must have rank 2 ([batch, dimensions])`);
  const width = shape[1];
  if (typeof width === 'number' && width !== dimensions) {
    fail(`output "${output}" has ${width} dimensions but the model folder declares ${dimensions}`);
  }
  return {
    ...inputContract,
    head: { kind: 'vector', name: output, width: dimensions },
    signalNames: [],
    activation: 'sigmoid',
  };
}

/** Number of logit columns per pair (a vector head: the vector's width). */
export function signalCount(contract: ModelContract): number {
  return contract.head.kind === 'vector' ? contract.head.width : contract.signalNames.length;
}

/**
 * Probabilities of one pair's logit columns `logits[from … from + k)` into `into` at the same
 * offsets: softmax over the columns (stable, float64) or a sigmoid per column.
 */
export function columnProbabilities(
  logits: ArrayLike<number>,
  from: number,
  k: number,
  activation: HeadActivation,
  into: Float64Array,
): void {
  if (activation === 'sigmoid') {
    for (let s = 0; s < k; s++) into[from + s] = sigmoid(logits[from + s]);
    return;
  }
  let max = Number.NEGATIVE_INFINITY;
  for (let s = 0; s < k; s++) max = Math.max(max, logits[from + s]);
  let sum = 0;
  for (let s = 0; s < k; s++) sum += Math.exp(logits[from + s] - max);
  for (let s = 0; s < k; s++) into[from + s] = Math.exp(logits[from + s] - max) / sum;
}

/** Logistic function in float64, stable for large |x|. */
export { sigmoid };
