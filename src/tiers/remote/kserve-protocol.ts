/**
 * The wire format of the KServe v2 / Open Inference Protocol over HTTP (Triton speaks it too):
 *   GET  /v2/models/<model>[/versions/<v>]         → `{name, platform, inputs: [{name, datatype, shape}], outputs: [...]}`
 *   GET  /v2/models/<model>[/versions/<v>]/config  → Triton's model configuration (`max_batch_size`); KServe has none
 *   POST /v2/models/<model>[/versions/<v>]/infer   `{inputs: [{name, shape, datatype, data}], outputs: [{name}]}`
 *                                                  → `{outputs: [{name, shape, datatype, data}]}`
 * Errors are an HTTP error status with `{"error": "..."}`. Tensor data is row-major, flat or
 * nested. The model must read what a Hugging Face cross-encoder export reads (`input_ids`,
 * `attention_mask`, optional `token_type_ids`, INT64 or INT32 [batch, sequence]) and give one
 * logit column per pair ([batch], [batch,1]) or two ([batch,2]: class 1 − class 0), as the local
 * cross-encoder tier reads an ONNX graph (src/tiers/cross-encoder/model-contract.ts).
 */
import { RemoteResponseError } from './errors.js';

/** Integer element types the engine can send token ids as. */
export type KserveIntegerType = 'INT64' | 'INT32';

/** One input the engine fills, as the model declares it. */
export interface KserveInput {
  readonly name: string;
  readonly datatype: KserveIntegerType;
}

/** What the engine learned of the model from its metadata (and Triton's configuration). */
export interface KserveModelContract {
  readonly inputIds: KserveInput;
  readonly attentionMask: KserveInput;
  /** null when the model takes no token_type_ids (RoBERTa-style exports). */
  readonly tokenTypeIds: KserveInput | null;
  /** The output read as logits. */
  readonly output: string;
  /** Logit columns per pair when the metadata fixes them: 1 ([n], [n,1]) or 2 ([n,2]); undefined: read from each answer. */
  readonly width: 1 | 2 | undefined;
  /** The sequence length every request must have when the model fixes it (a TensorRT plan, say). */
  readonly sequenceLength: number | undefined;
  /** Rows per request at most: Triton's max_batch_size, or a fixed batch dimension. */
  readonly maxBatch: number | undefined;
}

const INPUT_IDS = 'input_ids';
const ATTENTION_MASK = 'attention_mask';
const TOKEN_TYPE_IDS = 'token_type_ids';
const FILLED = new Set([INPUT_IDS, ATTENTION_MASK, TOKEN_TYPE_IDS]);
const FLOAT_TYPES = new Set(['FP32', 'FP64', 'FP16', 'BF16']);

function refuse(message: string): never {
  throw new RemoteResponseError(message, 'kserve');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RemoteResponseError(`kserve ${what} is not JSON`, 'kserve', { cause: error });
  }
}

/** A metadata tensor: name, datatype and shape (-1 for a variable dimension). */
interface MetadataTensor {
  readonly name: string;
  readonly datatype: string | undefined;
  readonly shape: readonly number[] | undefined;
}

function metadataTensors(list: unknown, field: 'inputs' | 'outputs'): MetadataTensor[] {
  if (!Array.isArray(list)) refuse(`kserve model metadata has no ${field} array`);
  return list.map((t, i) => {
    if (!isRecord(t) || typeof t.name !== 'string' || t.name === '')
      refuse(`kserve model metadata ${field}[${i}] has no name`);
    const shape =
      Array.isArray(t.shape) && t.shape.every((d) => typeof d === 'number' && Number.isSafeInteger(d))
        ? (t.shape as number[])
        : undefined;
    return { name: t.name, datatype: typeof t.datatype === 'string' ? t.datatype : undefined, shape };
  });
}

/** A fixed (positive) dimension, or undefined for a variable one (-1) or an unknown shape. */
function fixedDim(shape: readonly number[] | undefined, at: number): number | undefined {
  const d = shape?.[at];
  return d !== undefined && d > 0 ? d : undefined;
}

/** The contract as the metadata gives it, with the batch dimension when the shapes fix one. */
export interface ModelMetadata extends Omit<KserveModelContract, 'maxBatch'> {
  readonly batchDim: number | undefined;
}

/**
 * The model's contract from `GET /v2/models/<model>`: the inputs the engine fills and the output it
 * reads (`output` when given, else the only output, else the one named `logits`). A model that
 * needs an input the engine cannot fill, or gives no usable logits, is a RemoteResponseError
 * naming what it found.
 */
export function parseModelMetadata(text: string, output: string | undefined): ModelMetadata {
  const body = parseJson(text, 'model metadata');
  if (!isRecord(body)) refuse('kserve model metadata is not an object');
  const inputs = metadataTensors(body.inputs, 'inputs');
  const outputs = metadataTensors(body.outputs, 'outputs');
  const found = `inputs {${inputs.map((t) => t.name).join(', ')}}, outputs {${outputs.map((t) => t.name).join(', ')}}`;
  for (const t of inputs)
    if (!FILLED.has(t.name))
      refuse(
        `kserve model takes input "${t.name}", which the engine cannot fill (it sends input_ids, attention_mask, token_type_ids); found ${found}`,
      );
  const input = (name: string): KserveInput | null => {
    const t = inputs.find((x) => x.name === name);
    if (t === undefined) return null;
    // An undeclared type is sent as the export's int64.
    const datatype = t.datatype ?? 'INT64';
    if (datatype !== 'INT64' && datatype !== 'INT32')
      refuse(`kserve model input "${name}" is ${datatype}; token ids go as INT64 or INT32`);
    if (t.shape !== undefined && t.shape.length !== 2)
      refuse(`kserve model input "${name}" has shape [${t.shape.join(', ')}]; expected [batch, sequence]`);
    return { name, datatype };
  };
  const inputIds = input(INPUT_IDS);
  const attentionMask = input(ATTENTION_MASK);
  if (inputIds === null || attentionMask === null)
    refuse(`kserve model must take input_ids and attention_mask; found ${found}`);
  const sequenceLengths = new Set(inputs.map((t) => fixedDim(t.shape, 1)).filter((d): d is number => d !== undefined));
  if (sequenceLengths.size > 1) refuse(`kserve model inputs disagree on the sequence length; found ${found}`);
  const batchDims = inputs.map((t) => fixedDim(t.shape, 0)).filter((d): d is number => d !== undefined);

  let chosen: MetadataTensor | undefined;
  if (output !== undefined) {
    chosen = outputs.find((t) => t.name === output);
    if (chosen === undefined) refuse(`kserve model has no output "${output}"; found ${found}`);
  } else {
    chosen = outputs.length === 1 ? outputs[0] : outputs.find((t) => t.name === 'logits');
    if (chosen === undefined)
      refuse(
        `kserve model has ${outputs.length} outputs and none named "logits": name one with \`output\`; found ${found}`,
      );
  }
  if (chosen.datatype !== undefined && !FLOAT_TYPES.has(chosen.datatype))
    refuse(`kserve model output "${chosen.name}" is ${chosen.datatype}; logits are a float tensor`);
  const shape = chosen.shape;
  let width: 1 | 2 | undefined;
  if (shape === undefined) width = undefined;
  else if (shape.length === 1) width = 1;
  else if (shape.length === 2 && (shape[1] === 1 || shape[1] === 2)) width = shape[1];
  else if (shape.length === 2 && shape[1] < 0) width = undefined;
  else
    refuse(
      `kserve model output "${chosen.name}" has shape [${shape.join(', ')}]; expected [batch], [batch,1] or [batch,2] logits`,
    );
  return {
    inputIds,
    attentionMask,
    tokenTypeIds: input(TOKEN_TYPE_IDS),
    output: chosen.name,
    width,
    sequenceLength: [...sequenceLengths][0],
    batchDim: batchDims.length > 0 ? Math.min(...batchDims) : undefined,
  };
}

/**
 * Triton's `max_batch_size` from `GET …/config` (positive: the rows one request may hold);
 * undefined when the answer names none, or 0 (a model without batching takes any first dimension
 * its shape allows).
 */
export function parseMaxBatchSize(text: string): number | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const n = isRecord(body) ? body.max_batch_size : undefined;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** A batch's tensors: `rows` pairs of `sequence` tokens each, row-major. */
export interface TokenTensors {
  readonly rows: number;
  readonly sequence: number;
  readonly ids: Int32Array;
  readonly mask: Int32Array;
  readonly typeIds: Int32Array;
}

/** The infer request of one batch; only the logits output is asked for. */
export function inferBody(contract: KserveModelContract, t: TokenTensors): string {
  const shape = `[${t.rows},${t.sequence}]`;
  // Typed arrays join without an intermediate array of numbers: the body of 32 pairs × 512 tokens
  // is built in one pass per tensor.
  const tensor = (input: KserveInput, data: Int32Array): string =>
    `{"name":${JSON.stringify(input.name)},"shape":${shape},"datatype":"${input.datatype}","data":[${data.join(',')}]}`;
  const inputs = [tensor(contract.inputIds, t.ids), tensor(contract.attentionMask, t.mask)];
  if (contract.tokenTypeIds !== null) inputs.push(tensor(contract.tokenTypeIds, t.typeIds));
  return `{"inputs":[${inputs.join(',')}],"outputs":[{"name":${JSON.stringify(contract.output)}}]}`;
}

/** Row-major data, flat or nested, as one flat list (nothing but numbers accepted). */
function flatten(data: unknown, into: number[], depth: number): boolean {
  if (!Array.isArray(data)) return false;
  for (const v of data) {
    if (typeof v === 'number') into.push(v);
    else if (depth > 0 && Array.isArray(v)) {
      if (!flatten(v, into, depth - 1)) return false;
    } else return false;
  }
  return true;
}

/**
 * The logit of each of the batch's `rows` pairs, in row order: the output's value ([n], [n,1]) or
 * class 1 − class 0 ([n,2]). Anything else (no such output, a shape or length that does not fit,
 * a value that is not a finite number) is a RemoteResponseError.
 */
export function parseInferAnswer(contract: KserveModelContract, text: string, rows: number): Float64Array {
  const body = parseJson(text, 'answer');
  const outputs = isRecord(body) ? body.outputs : undefined;
  if (!Array.isArray(outputs)) refuse('kserve answer has no outputs array');
  const out = outputs.find((o) => isRecord(o) && o.name === contract.output) as Record<string, unknown> | undefined;
  if (out === undefined) refuse(`kserve answer has no output "${contract.output}"`);
  const shape = out.shape;
  if (!Array.isArray(shape) || shape.length < 1 || shape.length > 2 || shape[0] !== rows)
    refuse(`kserve answer's "${contract.output}" has shape ${JSON.stringify(shape)} for ${rows} pairs`);
  const width = shape.length === 1 ? 1 : shape[1];
  if (width !== 1 && width !== 2)
    refuse(`kserve answer's "${contract.output}" has ${String(width)} columns; expected 1 or 2`);
  if (contract.width !== undefined && width !== contract.width)
    refuse(`kserve answer's "${contract.output}" has ${width} columns; the model's metadata says ${contract.width}`);
  if (typeof out.datatype === 'string' && !FLOAT_TYPES.has(out.datatype))
    refuse(`kserve answer's "${contract.output}" is ${out.datatype}; logits are a float tensor`);
  const values: number[] = [];
  if (!flatten(out.data, values, shape.length - 1))
    refuse(`kserve answer's "${contract.output}" data is not an array of numbers (binary outputs are not read)`);
  if (values.length !== rows * width)
    refuse(`kserve answer's "${contract.output}" has ${values.length} values for shape [${shape.join(', ')}]`);
  const logits = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const logit = width === 1 ? values[i] : values[2 * i + 1] - values[2 * i];
    if (!Number.isFinite(logit)) refuse(`kserve answer's logit for row ${i} is not a finite number`);
    logits[i] = logit;
  }
  return logits;
}
