/**
 * Accumulates ONNX nodes and initializers with unique names; just enough to write a feed-forward
 * graph without hand-numbering every intermediate value.
 */
import { endianness } from 'node:os';
import { OnnxAttributeType, OnnxDataType, type OnnxAttribute, type OnnxNode, type OnnxTensor } from './onnx-proto.js';

export type AttributeValue =
  | { readonly int: number }
  | { readonly ints: readonly number[] }
  | { readonly float: number }
  | { readonly string: string };

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** Little-endian bytes of a typed array, without a copy on little-endian hosts. */
function littleEndianBytes(values: Float32Array | BigInt64Array | Int32Array): Uint8Array {
  const view = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  if (LITTLE_ENDIAN_HOST) return view;
  const out = new Uint8Array(view.length);
  const width = values.BYTES_PER_ELEMENT;
  for (let i = 0; i < view.length; i += width) {
    for (let b = 0; b < width; b++) out[i + b] = view[i + width - 1 - b];
  }
  return out;
}

function toAttribute(name: string, value: AttributeValue): OnnxAttribute {
  if ('int' in value) return { name, type: OnnxAttributeType.INT, i: value.int };
  if ('ints' in value) return { name, type: OnnxAttributeType.INTS, ints: [...value.ints] };
  if ('float' in value) return { name, type: OnnxAttributeType.FLOAT, f: value.float };
  return { name, type: OnnxAttributeType.STRING, s: new TextEncoder().encode(value.string) };
}

export class GraphBuilder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  private readonly used = new Set<string>();
  private counter = 0;

  /** Adds a node with one output and returns the output's name. `scope` prefixes the names. */
  op(
    scope: string,
    opType: string,
    inputs: readonly string[],
    attributes: Record<string, AttributeValue> = {},
    outputName?: string,
  ): string {
    const name = this.unique(`${scope}/${opType}`);
    const output = outputName ?? `${name}_output_0`;
    this.claim(output);
    this.nodes.push({
      name,
      op_type: opType,
      input: [...inputs],
      output: [output],
      attribute: Object.entries(attributes).map(([key, value]) => toAttribute(key, value)),
    });
    return output;
  }

  /** Adds a node with several outputs (e.g. DynamicQuantizeLinear) and returns their names. */
  opMulti(
    scope: string,
    opType: string,
    inputs: readonly string[],
    outputCount: number,
    attributes: Record<string, AttributeValue> = {},
  ): string[] {
    const name = this.unique(`${scope}/${opType}`);
    const outputs = Array.from({ length: outputCount }, (_, i) => `${name}_output_${i}`);
    for (const output of outputs) this.claim(output);
    this.nodes.push({
      name,
      op_type: opType,
      input: [...inputs],
      output: outputs,
      attribute: Object.entries(attributes).map(([key, value]) => toAttribute(key, value)),
    });
    return outputs;
  }

  /** Adds an int8 (signed) or uint8 initializer from its bytes. */
  byteTensor(name: string, dims: readonly number[], values: Int8Array | Uint8Array): string {
    this.checkSize(name, dims, values.length);
    this.claim(name);
    this.initializers.push({
      name,
      dims: [...dims],
      data_type: values instanceof Int8Array ? OnnxDataType.INT8 : OnnxDataType.UINT8,
      raw_data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
    });
    return name;
  }

  /** Adds a float32 initializer; `values.length` must equal the product of `dims`. */
  floatTensor(name: string, dims: readonly number[], values: Float32Array): string {
    this.checkSize(name, dims, values.length);
    this.claim(name);
    this.initializers.push({
      name,
      dims: [...dims],
      data_type: OnnxDataType.FLOAT,
      raw_data: littleEndianBytes(values),
    });
    return name;
  }

  /** Adds an int64 initializer (shapes, indices, axes). */
  int64Tensor(name: string, dims: readonly number[], values: readonly number[]): string {
    this.checkSize(name, dims, values.length);
    this.claim(name);
    const data = BigInt64Array.from(values, (v) => BigInt(v));
    this.initializers.push({ name, dims: [...dims], data_type: OnnxDataType.INT64, raw_data: littleEndianBytes(data) });
    return name;
  }

  /** A float32 scalar constant (rank 0). */
  floatScalar(name: string, value: number): string {
    return this.floatTensor(name, [], Float32Array.of(value));
  }

  private checkSize(name: string, dims: readonly number[], length: number): void {
    const expected = dims.reduce((a, b) => a * b, 1);
    if (expected !== length)
      throw new RangeError(`internal error: tensor ${name} has ${length} values for dims [${dims.join(', ')}]`);
  }

  private claim(name: string): void {
    if (this.used.has(name)) throw new RangeError(`internal error: ONNX value name ${name} used twice`);
    this.used.add(name);
  }

  private unique(base: string): string {
    let name = base;
    while (this.used.has(name)) name = `${base}_${++this.counter}`;
    this.used.add(name);
    return name;
  }
}
