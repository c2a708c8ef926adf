/**
 * Builds a BERT-for-sequence-classification ONNX graph (opset 17) with seeded random weights.
 * The result is a SPEED/SHAPE model: real architecture and sizes, meaningless scores. It is NOT a
 * relevance model.
 *
 * The graph follows what the Hugging Face exporter produces for BertForSequenceClassification:
 * embeddings (word + position + token type) → LayerNorm → N × [self-attention with an additive
 * padding mask → output projection + residual → LayerNorm → FFN (exact Erf GELU) + residual →
 * LayerNorm] → pooler (first token → dense → tanh) → classifier head(s).
 * Linear weights are stored already transposed ([in, out]) so each projection is MatMul + Add.
 */
import { InvalidArgumentError } from '../../../errors.js';
import { GraphBuilder } from './graph-builder.js';
import {
  encodeOnnxModel,
  OnnxDataType,
  type OnnxDataTypeCode,
  type OnnxModel,
  type OnnxValueInfo,
} from './onnx-proto.js';
import { fillNormal } from './seeded-normal.js';
import { resolveCrossEncoderSpec, SPEED_SHAPE_NOTICE, type CrossEncoderModelSpec } from './model-spec.js';

export const ONNX_OPSET = 17;
/** IR version 8 pairs with opset 17 (ONNX 1.13); every onnxruntime since 1.14 reads it. */
export const ONNX_IR_VERSION = 8;
export const DEFAULT_MODEL_SEED = 42;

/**
 * Added to attention scores at padded key positions: the most negative float32, as transformers
 * does. exp(min - rowMax) is exactly 0, so padding contributes nothing and a pair scores the same
 * whatever it is batched with.
 */
const MASK_FILL = -3.4028234663852886e38;

const BATCH_DIM = 'batch_size';
const SEQUENCE_DIM = 'sequence_length';

export interface BuildOnnxOptions {
  /** Unsigned 32-bit seed of the weights. */
  readonly seed?: number;
  /** Preset name recorded in the model's metadata (defaults to spec.name). */
  readonly preset?: string;
}

function tensorInput(name: string, elemType: OnnxDataTypeCode, dims: (string | number)[]): OnnxValueInfo {
  return {
    name,
    type: {
      tensor_type: {
        elem_type: elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d })) },
      },
    },
  };
}

export function normalizeSeed(seed: number | undefined): number {
  const value = seed ?? DEFAULT_MODEL_SEED;
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffffffff) {
    throw new InvalidArgumentError(`seed must be an integer in [0, 4294967295], got ${String(seed)}`);
  }
  return value;
}

/** Builds the ModelProto (plain object; large initializers hold views of freshly drawn arrays). */
export function buildCrossEncoderModelProto(
  unvalidated: CrossEncoderModelSpec,
  options: BuildOnnxOptions = {},
): OnnxModel {
  const spec = resolveCrossEncoderSpec(unvalidated);
  const seed = normalizeSeed(options.seed);
  const g = new GraphBuilder();
  const h = spec.hiddenSize;
  const heads = spec.numHeads;
  const headDim = h / heads;

  const std = (fanIn: number): number => (spec.initStd === 'fan-in' ? 1 / Math.sqrt(fanIn) : spec.initStd);
  const normal = (name: string, dims: number[], sd: number): string => {
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    fillNormal(values, sd, seed, name);
    return g.floatTensor(name, dims, values);
  };
  const constant = (name: string, dims: number[], value: number): string =>
    g.floatTensor(name, dims, new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(value));
  const embeddingStd = spec.initStd === 'fan-in' ? 1 : spec.initStd;

  /** MatMul + Add with weight [in, out] and zero-mean small random bias. */
  const linear = (scope: string, param: string, x: string, fanIn: number, fanOut: number): string => {
    const w = normal(`${param}.weight`, [fanIn, fanOut], std(fanIn));
    const b = normal(`${param}.bias`, [fanOut], 0.02);
    const product = g.op(scope, 'MatMul', [x, w]);
    return g.op(scope, 'Add', [product, b]);
  };
  const layerNorm = (scope: string, param: string, x: string, outputName?: string): string => {
    const gamma = constant(`${param}.weight`, [h], 1);
    const beta = constant(`${param}.bias`, [h], 0);
    return g.op(
      scope,
      'LayerNormalization',
      [x, gamma, beta],
      { axis: { int: -1 }, epsilon: { float: spec.layerNormEps } },
      outputName,
    );
  };

  // ---- graph inputs -------------------------------------------------------------------------
  const idsName = spec.defect === 'no-input-ids' ? 'tokens' : 'input_ids';
  const idsType = spec.defect === 'input-ids-int32' ? OnnxDataType.INT32 : OnnxDataType.INT64;
  const inputs = [
    tensorInput(idsName, idsType, [BATCH_DIM, SEQUENCE_DIM]),
    tensorInput('attention_mask', OnnxDataType.INT64, [BATCH_DIM, SEQUENCE_DIM]),
  ];
  if (spec.tokenTypeInput) inputs.push(tensorInput('token_type_ids', OnnxDataType.INT64, [BATCH_DIM, SEQUENCE_DIM]));

  // ---- embeddings ---------------------------------------------------------------------------
  const emb = '/bert/embeddings';
  const wordTable = normal('bert.embeddings.word_embeddings.weight', [spec.vocabSize, h], embeddingStd);
  const positionTable = normal(
    'bert.embeddings.position_embeddings.weight',
    [spec.maxPositionEmbeddings, h],
    embeddingStd,
  );
  const typeTable = normal('bert.embeddings.token_type_embeddings.weight', [spec.typeVocabSize, h], embeddingStd);

  const words = g.op(emb, 'Gather', [wordTable, idsName], { axis: { int: 0 } });
  // Positions 0..S-1: slice the table to the sequence length ([S, H], broadcast over the batch).
  const seqLen = g.op(emb, 'Shape', [idsName], { start: { int: 1 }, end: { int: 2 } });
  const zero1d = g.int64Tensor('const_zero_1d', [1], [0]);
  const positions = g.op(emb, 'Slice', [positionTable, zero1d, seqLen, zero1d]);
  let types: string;
  if (spec.tokenTypeInput) {
    types = g.op(emb, 'Gather', [typeTable, 'token_type_ids'], { axis: { int: 0 } });
  } else {
    // No token_type_ids input: every token is type 0, as transformers does when it is omitted.
    const zeroScalar = g.int64Tensor('const_zero_scalar', [], [0]);
    types = g.op(emb, 'Gather', [typeTable, zeroScalar], { axis: { int: 0 } });
  }
  const embSum = g.op(emb, 'Add', [g.op(emb, 'Add', [words, positions]), types]);
  let hidden = layerNorm(emb, 'bert.embeddings.LayerNorm', embSum);

  // ---- additive attention mask [B, 1, 1, S] -------------------------------------------------
  const maskScope = '/bert/extended_attention_mask';
  const one = g.floatScalar('const_one', 1);
  const maskFloat = g.op(maskScope, 'Cast', ['attention_mask'], { to: { int: OnnxDataType.FLOAT } });
  const maskAxes = g.int64Tensor('const_mask_unsqueeze_axes', [2], [1, 2]);
  const maskExpanded = g.op(maskScope, 'Unsqueeze', [maskFloat, maskAxes]);
  const inverted = g.op(maskScope, 'Sub', [one, maskExpanded]);
  const additiveMask = g.op(maskScope, 'Mul', [inverted, g.floatScalar('const_mask_fill', MASK_FILL)]);

  const splitHeadsShape = g.int64Tensor('const_split_heads_shape', [4], [0, 0, heads, headDim]);
  const mergeHeadsShape = g.int64Tensor('const_merge_heads_shape', [3], [0, 0, h]);
  const scoreScale = g.floatScalar('const_attention_scale', Math.sqrt(headDim));
  const sqrt2 = g.floatScalar('const_sqrt2', Math.SQRT2);
  const half = g.floatScalar('const_half', 0.5);

  // ---- encoder layers -----------------------------------------------------------------------
  for (let layer = 0; layer < spec.numLayers; layer++) {
    const scope = `/bert/encoder/layer.${layer}`;
    const param = `bert.encoder.layer.${layer}`;
    const att = `${scope}/attention/self`;
    const toHeads = (x: string, perm: number[]): string =>
      g.op(att, 'Transpose', [g.op(att, 'Reshape', [x, splitHeadsShape])], { perm: { ints: perm } });

    const q = toHeads(linear(`${att}/query`, `${param}.attention.self.query`, hidden, h, h), [0, 2, 1, 3]); // [B,n,S,d]
    const kT = toHeads(linear(`${att}/key`, `${param}.attention.self.key`, hidden, h, h), [0, 2, 3, 1]); // [B,n,d,S]
    const v = toHeads(linear(`${att}/value`, `${param}.attention.self.value`, hidden, h, h), [0, 2, 1, 3]); // [B,n,S,d]

    const scores = g.op(att, 'Div', [g.op(att, 'MatMul', [q, kT]), scoreScale]); // [B,n,S,S]
    const masked = g.op(att, 'Add', [scores, additiveMask]);
    const probs = g.op(att, 'Softmax', [masked], { axis: { int: -1 } });
    const context = g.op(att, 'MatMul', [probs, v]); // [B,n,S,d]
    const merged = g.op(att, 'Reshape', [
      g.op(att, 'Transpose', [context], { perm: { ints: [0, 2, 1, 3] } }),
      mergeHeadsShape,
    ]);

    const attOut = linear(`${scope}/attention/output/dense`, `${param}.attention.output.dense`, merged, h, h);
    const attResidual = g.op(`${scope}/attention/output`, 'Add', [attOut, hidden]);
    const afterAttention = layerNorm(`${scope}/attention/output`, `${param}.attention.output.LayerNorm`, attResidual);

    const ffnScope = `${scope}/intermediate`;
    const inner = linear(`${ffnScope}/dense`, `${param}.intermediate.dense`, afterAttention, h, spec.intermediateSize);
    // GELU, exact form: 0.5 · x · (1 + erf(x / √2)).
    const erf = g.op(ffnScope, 'Erf', [g.op(ffnScope, 'Div', [inner, sqrt2])]);
    const gelu = g.op(ffnScope, 'Mul', [g.op(ffnScope, 'Mul', [inner, g.op(ffnScope, 'Add', [erf, one])]), half]);

    const ffnOut = linear(`${scope}/output/dense`, `${param}.output.dense`, gelu, spec.intermediateSize, h);
    const ffnResidual = g.op(`${scope}/output`, 'Add', [ffnOut, afterAttention]);
    hidden = layerNorm(`${scope}/output`, `${param}.output.LayerNorm`, ffnResidual);
  }

  // ---- pooler + classifier head(s) ----------------------------------------------------------
  const firstToken = g.op('/bert/pooler', 'Gather', [hidden, g.int64Tensor('const_first_token', [], [0])], {
    axis: { int: 1 },
  }); // [B,H]
  const pooled = g.op('/bert/pooler', 'Tanh', [linear('/bert/pooler/dense', 'bert.pooler.dense', firstToken, h, h)]);

  const outputs: OnnxValueInfo[] = [];
  const single = spec.outputs.length === 1;
  for (const head of spec.outputs) {
    const param = single ? 'classifier' : `classifier.${head.name}`;
    const w = normal(`${param}.weight`, [h, head.size], std(h));
    const b = normal(`${param}.bias`, [head.size], 0.02);
    const scope = `/classifier/${head.name}`;
    g.op(scope, 'Add', [g.op(scope, 'MatMul', [pooled, w]), b], {}, head.name);
    outputs.push(tensorInput(head.name, OnnxDataType.FLOAT, [BATCH_DIM, head.size]));
  }

  const notice = `${spec.name}: ${spec.description}. ${SPEED_SHAPE_NOTICE}; seed ${seed}.`;
  return {
    ir_version: ONNX_IR_VERSION,
    opset_import: [{ domain: '', version: ONNX_OPSET }],
    producer_name: 'relevance-gate model-gen',
    producer_version: '1',
    doc_string: notice,
    graph: {
      name: `relevance_gate_${spec.name.replace(/[^A-Za-z0-9_]/g, '_')}_speed_shape_model`,
      doc_string: notice,
      node: g.nodes,
      initializer: g.initializers,
      input: inputs,
      output: outputs,
    },
    metadata_props: [
      { key: 'relevance_gate.kind', value: SPEED_SHAPE_NOTICE },
      { key: 'relevance_gate.preset', value: options.preset ?? spec.name },
      { key: 'relevance_gate.seed', value: String(seed) },
    ],
  };
}

/** Serialized ONNX bytes of the spec's model. Same spec and seed → byte-identical output. */
export function buildCrossEncoderOnnx(spec: CrossEncoderModelSpec, options: BuildOnnxOptions = {}): Uint8Array {
  return encodeOnnxModel(buildCrossEncoderModelProto(spec, options));
}
