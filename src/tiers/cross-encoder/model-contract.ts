/**
 * The cross-encoder model contract, discovered from the ONNX session's metadata at load.
 *
 * Inputs: `input_ids` and `attention_mask` (int64, [batch, seq]) are required, `token_type_ids`
 * is optional (RoBERTa/XLM-R models lack it); any other input is refused (we could not feed it).
 * Outputs (float32, first dim = batch):
 *  - one output [b] or [b,1] → its value is the logit (signal `relevance`);
 *  - one output [b,2] → logit = class 1 − class 0 (a 2-way softmax head; sigmoid of the difference
 *    equals the softmax probability of class 1);
 *  - several outputs, each [b] or [b,1] → one named signal per output (multi-signal heads).
 * Anything else fails at load with a ModelContractError saying what was expected and what was found.
 */
import { RELEVANT } from '../../signals.js';
import { ModelContractError } from './errors.js';

/** The subset of onnxruntime's value metadata we read (kept structural so tests need no session). */
export interface ValueMetadataLike {
  readonly name: string;
  readonly isTensor: boolean;
  readonly type?: string;
  readonly shape?: ReadonlyArray<number | string>;
}

export type OutputHead =
  /** One value per pair at `name`, `width` 1 (shape [b] or [b,1]). */
  | { readonly kind: 'single'; readonly name: string }
  /** [b,2]: logit = out[:,1] − out[:,0]. */
  | { readonly kind: 'binary'; readonly name: string }
  /** Several [b]/[b,1] outputs, one signal each, in this order. */
  | { readonly kind: 'multi'; readonly names: readonly string[] };

export interface ModelContract {
  readonly inputIds: string;
  readonly attentionMask: string;
  /** null when the model has no token_type_ids input. */
  readonly tokenTypeIds: string | null;
  readonly head: OutputHead;
  /** Signal names, one per logit column: ['relevant'] for single/binary heads, output names for multi. */
  readonly signalNames: readonly string[];
}

export const INPUT_IDS = 'input_ids';
export const ATTENTION_MASK = 'attention_mask';
export const TOKEN_TYPE_IDS = 'token_type_ids';

const EXPECTED =
  'expected inputs input_ids + attention_mask (+ optional token_type_ids), int64 [batch, sequence]; ' +
  'outputs: one float32 [batch,1] or [batch,2] (e.g. "logits"), or several float32 [batch,1]/[batch] named outputs';

function describe(values: readonly ValueMetadataLike[]): string {
  return values
    .map((v) => (v.isTensor ? `${v.name}: ${v.type ?? '?'} [${(v.shape ?? []).join(', ')}]` : `${v.name}: non-tensor`))
    .join('; ');
}

/** Width of the second dim: 1 for [b] or [b,1], 2 for [b,2], a string for symbolic, null for other ranks. */
function labelWidth(v: ValueMetadataLike): number | string | null {
  const shape = v.shape ?? [];
  if (shape.length === 1) return 1;
  if (shape.length === 2) return shape[1];
  return null;
}

export function discoverContract(
  inputs: readonly ValueMetadataLike[],
  outputs: readonly ValueMetadataLike[],
): ModelContract {
  const fail = (why: string): never => {
    throw new ModelContractError(
      `${why}; ${EXPECTED}; found inputs {${describe(inputs)}} outputs {${describe(outputs)}}`,
    );
  };
  const byName = new Map(inputs.map((v) => [v.name, v]));
  for (const required of [INPUT_IDS, ATTENTION_MASK]) {
    if (!byName.has(required)) fail(`missing required input "${required}"`);
  }
  for (const v of inputs) {
    if (v.name !== INPUT_IDS && v.name !== ATTENTION_MASK && v.name !== TOKEN_TYPE_IDS) {
      fail(`unexpected input "${v.name}"`);
    }
    if (!v.isTensor || v.type !== 'int64') fail(`input "${v.name}" must be an int64 tensor`);
    if (v.shape !== undefined && v.shape.length !== 2) fail(`input "${v.name}" must have rank 2`);
  }
  if (outputs.length === 0) fail('the model has no outputs');
  for (const v of outputs) {
    if (!v.isTensor || v.type !== 'float32') fail(`output "${v.name}" must be a float32 tensor`);
  }

  let head: OutputHead;
  let signalNames: string[];
  if (outputs.length === 1) {
    const out = outputs[0];
    const width = labelWidth(out);
    if (width === 1) head = { kind: 'single', name: out.name };
    else if (width === 2) head = { kind: 'binary', name: out.name };
    else return fail(`output "${out.name}" must be [batch,1] or [batch,2]`);
    signalNames = [RELEVANT];
  } else {
    for (const out of outputs) {
      if (labelWidth(out) !== 1) fail(`with several outputs, each must be [batch,1] or [batch]; "${out.name}" is not`);
    }
    const names = outputs.map((o) => o.name);
    head = { kind: 'multi', names };
    signalNames = names;
  }
  return {
    inputIds: INPUT_IDS,
    attentionMask: ATTENTION_MASK,
    tokenTypeIds: byName.has(TOKEN_TYPE_IDS) ? TOKEN_TYPE_IDS : null,
    head,
    signalNames,
  };
}

/** Number of logit columns per pair. */
export function signalCount(contract: ModelContract): number {
  return contract.signalNames.length;
}

/** Logistic function in float64, stable for large |x|. */
export { sigmoid } from '../../util/sigmoid.js';
