/**
 * Dynamic int8 quantization of a generated fp32 graph, in the form onnxruntime's
 * `quantize_dynamic` writes (and so the sentence-transformers / Optimum `model_qint8_*`,
 * `model_quint8_*` and transformers.js `model_quantized` files):
 *
 *   MatMul(x, W)  →  DynamicQuantizeLinear(x) → (x_q uint8, x_scale, x_zero_point)
 *                    MatMulInteger(x_q, W_q, x_zero_point, W_zero_point) → int32
 *                    Cast(float) · (x_scale · W_scale)
 *   Gather(T, ids) → Gather(T_q, ids) → DequantizeLinear(·, T_scale, T_zero_point)
 *
 * Every MatMul whose B input is a float initializer (the weights; activation × activation
 * products stay float, as with `MatMulConstBOnly`) and every Gather from a float embedding table
 * is rewritten. Weights get one per-tensor scale and zero point: qint8 symmetric (zero point 0,
 * range ±127), quint8 asymmetric (range 0…255, zero point from the tensor's min). The quantized
 * weights come from the same fp32 values, so the scores track the fp32 graph's.
 */
import { endianness } from 'node:os';
import { OnnxDataType, type OnnxModel, type OnnxNode, type OnnxTensor } from './onnx-proto.js';

export type QuantizedWeightType = 'qint8' | 'quint8';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

function floatValues(tensor: OnnxTensor): Float32Array {
  const raw = tensor.raw_data;
  if (LITTLE_ENDIAN_HOST && raw.byteOffset % 4 === 0)
    return new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  return Float32Array.from({ length: raw.byteLength / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

function floatScalarTensor(name: string, value: number): OnnxTensor {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setFloat32(0, value, true);
  return { name, dims: [], data_type: OnnxDataType.FLOAT, raw_data: bytes };
}

interface QuantizedTensor {
  readonly values: OnnxTensor;
  readonly scale: OnnxTensor;
  readonly zeroPoint: OnnxTensor;
}

/** Per-tensor quantization of a float initializer (ORT's rounding: nearest, ties to even not needed here). */
export function quantizeTensor(tensor: OnnxTensor, type: QuantizedWeightType): QuantizedTensor {
  const w = floatValues(tensor);
  let min = 0;
  let max = 0;
  for (let i = 0; i < w.length; i++) {
    if (w[i] < min) min = w[i];
    if (w[i] > max) max = w[i];
  }
  const out = new Uint8Array(w.length);
  let scale: number;
  let zeroPoint: number;
  if (type === 'qint8') {
    const absMax = Math.max(-min, max);
    scale = absMax > 0 ? absMax / 127 : 1;
    zeroPoint = 0;
    const signed = new Int8Array(out.buffer);
    for (let i = 0; i < w.length; i++) signed[i] = Math.max(-127, Math.min(127, Math.round(w[i] / scale)));
  } else {
    scale = max > min ? (max - min) / 255 : 1;
    zeroPoint = Math.max(0, Math.min(255, Math.round(-min / scale)));
    for (let i = 0; i < w.length; i++) out[i] = Math.max(0, Math.min(255, Math.round(w[i] / scale) + zeroPoint));
  }
  const dataType = type === 'qint8' ? OnnxDataType.INT8 : OnnxDataType.UINT8;
  const zp = new Uint8Array(1);
  if (type === 'qint8') new Int8Array(zp.buffer)[0] = zeroPoint;
  else zp[0] = zeroPoint;
  return {
    values: { name: `${tensor.name}_quantized`, dims: [...tensor.dims], data_type: dataType, raw_data: out },
    scale: floatScalarTensor(`${tensor.name}_scale`, Math.fround(scale)),
    zeroPoint: { name: `${tensor.name}_zero_point`, dims: [], data_type: dataType, raw_data: zp },
  };
}

function node(name: string, opType: string, inputs: string[], outputs: string[], to?: number): OnnxNode {
  return {
    name,
    op_type: opType,
    input: inputs,
    output: outputs,
    attribute: to === undefined ? [] : [{ name: 'to', type: 2, i: to }],
  };
}

export interface QuantizeReport {
  readonly model: OnnxModel;
  /** MatMuls rewritten to MatMulInteger. */
  readonly matMuls: number;
  /** Gathers rewritten to a quantized table + DequantizeLinear. */
  readonly gathers: number;
}

/** A new model; `model` is not modified (unchanged initializers are shared, not copied). */
export function quantizeDynamic(model: OnnxModel, type: QuantizedWeightType): QuantizeReport {
  const graph = model.graph;
  const initializers = new Map(graph.initializer.map((t) => [t.name, t]));
  const isWeight = (name: string): boolean => {
    const t = initializers.get(name);
    return t !== undefined && t.data_type === OnnxDataType.FLOAT && t.dims.length === 2 && !name.startsWith('const_');
  };
  const quantized = new Map<string, QuantizedTensor>();
  const quantizeWeight = (name: string): QuantizedTensor => {
    let q = quantized.get(name);
    if (q === undefined) {
      q = quantizeTensor(initializers.get(name)!, type);
      quantized.set(name, q);
    }
    return q;
  };
  const activations = new Map<string, [string, string, string]>();
  const nodes: OnnxNode[] = [];
  const stillUsed = new Set<string>();
  let matMuls = 0;
  let gathers = 0;

  for (const n of graph.node) {
    if (n.op_type === 'MatMul' && isWeight(n.input[1]) && !initializers.has(n.input[0])) {
      const w = quantizeWeight(n.input[1]);
      const x = n.input[0];
      let xq = activations.get(x);
      if (xq === undefined) {
        const base = `${x}_dynamic_quant`;
        xq = [`${base}_quantized`, `${base}_scale`, `${base}_zero_point`];
        nodes.push(node(`${base}/DynamicQuantizeLinear`, 'DynamicQuantizeLinear', [x], [...xq]));
        activations.set(x, xq);
      }
      const out = n.output[0];
      nodes.push(
        node(`${n.name}_quant`, 'MatMulInteger', [xq[0], w.values.name, xq[2], w.zeroPoint.name], [`${out}_int32`]),
        node(`${n.name}_quant_cast`, 'Cast', [`${out}_int32`], [`${out}_cast`], OnnxDataType.FLOAT),
        node(`${n.name}_quant_scales_mul`, 'Mul', [xq[1], w.scale.name], [`${out}_scale`]),
        node(`${n.name}_quant_output_scale_mul`, 'Mul', [`${out}_cast`, `${out}_scale`], [out]),
      );
      matMuls++;
      continue;
    }
    if (n.op_type === 'Gather' && isWeight(n.input[0])) {
      const t = quantizeWeight(n.input[0]);
      const out = n.output[0];
      nodes.push(
        { ...n, name: `${n.name}_quant`, input: [t.values.name, n.input[1]], output: [`${out}_quantized`] },
        node(`${n.name}_dequant`, 'DequantizeLinear', [`${out}_quantized`, t.scale.name, t.zeroPoint.name], [out]),
      );
      gathers++;
      continue;
    }
    for (const input of n.input) stillUsed.add(input);
    nodes.push(n);
  }

  const initializer: OnnxTensor[] = [];
  for (const t of graph.initializer) {
    const q = quantized.get(t.name);
    if (q !== undefined) initializer.push(q.values, q.scale, q.zeroPoint);
    if (q === undefined || stillUsed.has(t.name)) initializer.push(t);
  }
  const notice = `${model.doc_string} Dynamically quantized (${type} weights, per-tensor, MatMulInteger).`;
  return {
    model: {
      ...model,
      doc_string: notice,
      graph: { ...graph, doc_string: notice, node: nodes, initializer },
      metadata_props: [...model.metadata_props, { key: 'relevance_gate.quantization', value: `dynamic ${type}` }],
    },
    matMuls,
    gathers,
  };
}
