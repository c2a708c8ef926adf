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
 * range ±127), quint8 asymmetric (range 0…255, zero point from the tensor's min). With
 * `perChannel` (quantize_dynamic's per_channel=True), each MatMul weight gets a scale and zero
 * point per output column instead (1-D, as MatMulInteger's per-column b_zero_point takes them);
 * embedding tables stay per tensor. The quantized weights come from the same fp32 values, so the
 * scores track the fp32 graph's.
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

/**
 * Quantization of a float initializer (ORT's rounding: nearest, ties to even not needed here): one
 * scale and zero point for the tensor, or with `perColumn` one per column of a 2-D [in, out] weight
 * (scale and zero point then 1-D of length out).
 */
export function quantizeTensor(tensor: OnnxTensor, type: QuantizedWeightType, perColumn = false): QuantizedTensor {
  const w = floatValues(tensor);
  const columns = perColumn && tensor.dims.length === 2 ? tensor.dims[1] : 1;
  const mins = new Float64Array(columns);
  const maxs = new Float64Array(columns);
  for (let i = 0; i < w.length; i++) {
    const c = i % columns;
    if (w[i] < mins[c]) mins[c] = w[i];
    if (w[i] > maxs[c]) maxs[c] = w[i];
  }
  // Scales stay float64 for the rounding (as before per-channel existed); written as float32.
  const scales = new Float64Array(columns);
  const zeroPoints = new Uint8Array(columns);
  for (let c = 0; c < columns; c++) {
    const [min, max] = [mins[c], maxs[c]];
    if (type === 'qint8') {
      const absMax = Math.max(-min, max);
      scales[c] = absMax > 0 ? absMax / 127 : 1;
    } else {
      scales[c] = max > min ? (max - min) / 255 : 1;
      zeroPoints[c] = Math.max(0, Math.min(255, Math.round(-min / scales[c])));
    }
  }
  const out = new Uint8Array(w.length);
  if (type === 'qint8') {
    const signed = new Int8Array(out.buffer);
    for (let i = 0; i < w.length; i++)
      signed[i] = Math.max(-127, Math.min(127, Math.round(w[i] / scales[i % columns])));
  } else {
    for (let i = 0; i < w.length; i++) {
      const c = i % columns;
      out[i] = Math.max(0, Math.min(255, Math.round(w[i] / scales[c]) + zeroPoints[c]));
    }
  }
  const dataType = type === 'qint8' ? OnnxDataType.INT8 : OnnxDataType.UINT8;
  const values: OnnxTensor = {
    name: `${tensor.name}_quantized`,
    dims: [...tensor.dims],
    data_type: dataType,
    raw_data: out,
  };
  if (columns === 1 && !perColumn) {
    return {
      values,
      scale: floatScalarTensor(`${tensor.name}_scale`, Math.fround(scales[0])),
      // qint8 zero points are 0: the same byte as int8 or uint8.
      zeroPoint: { name: `${tensor.name}_zero_point`, dims: [], data_type: dataType, raw_data: zeroPoints },
    };
  }
  return {
    values,
    scale: {
      name: `${tensor.name}_scale`,
      dims: [columns],
      data_type: OnnxDataType.FLOAT,
      raw_data: new Uint8Array(Float32Array.from(scales).buffer),
    },
    zeroPoint: { name: `${tensor.name}_zero_point`, dims: [columns], data_type: dataType, raw_data: zeroPoints },
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

export interface QuantizeOptions {
  /** One scale and zero point per output column of each MatMul weight (default: per tensor). */
  readonly perChannel?: boolean;
}

/** A new model; `model` is not modified (unchanged initializers are shared, not copied). */
export function quantizeDynamic(
  model: OnnxModel,
  type: QuantizedWeightType,
  options: QuantizeOptions = {},
): QuantizeReport {
  const perChannel = options.perChannel === true;
  const graph = model.graph;
  const initializers = new Map(graph.initializer.map((t) => [t.name, t]));
  const isWeight = (name: string): boolean => {
    const t = initializers.get(name);
    return t !== undefined && t.data_type === OnnxDataType.FLOAT && t.dims.length === 2 && !name.startsWith('const_');
  };
  const quantized = new Map<string, QuantizedTensor>();
  const quantizeWeight = (name: string, perColumn: boolean): QuantizedTensor => {
    let q = quantized.get(name);
    if (q === undefined) {
      q = quantizeTensor(initializers.get(name)!, type, perColumn);
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
      const w = quantizeWeight(n.input[1], perChannel);
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
      const t = quantizeWeight(n.input[0], false);
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
  const granularity = perChannel ? 'per-channel MatMul weights, per-tensor tables' : 'per-tensor';
  const notice = `${model.doc_string} Dynamically quantized (${type} weights, ${granularity}, MatMulInteger).`;
  return {
    model: {
      ...model,
      doc_string: notice,
      graph: { ...graph, doc_string: notice, node: nodes, initializer },
      metadata_props: [
        ...model.metadata_props,
        { key: 'relevance_gate.quantization', value: `dynamic ${type}${perChannel ? ' per-channel' : ''}` },
      ],
    },
    matMuls,
    gathers,
  };
}
