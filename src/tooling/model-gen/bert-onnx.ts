/**
 * Builds a cross-encoder / sequence-classification ONNX graph (opset 17) with seeded random
 * weights, for every family the generator knows. The result is a SPEED/SHAPE model: real
 * architecture and sizes, meaningless scores. It is NOT a relevance model.
 *
 * BERT and RoBERTa / XLM-RoBERTa follow what the Hugging Face exporter produces for
 * (Bert|Roberta|XLMRoberta)ForSequenceClassification: embeddings (word + position + token type) →
 * LayerNorm → N × [self-attention with an additive padding mask → output projection + residual →
 * LayerNorm → FFN (exact Erf GELU) + residual → LayerNorm] → head. BERT's head is the pooler
 * (first token → dense → tanh) → classifier; RoBERTa's is classifier.dense → tanh →
 * classifier.out_proj on the first token, and its positions are padding_idx + cumsum(ids ≠ pad).
 * ModernBERT and DeBERTa-v2 are built in their own modules. Linear weights are stored already
 * transposed ([in, out]) so each projection is MatMul + Add.
 */
import { InvalidArgumentError } from '../../errors.js';
import { buildDebertaBody } from './deberta-onnx.js';
import { type FamilyBody, GraphContext, type GraphInputs } from './graph-context.js';
import { buildModernBertBody } from './modernbert-onnx.js';
import { encodeOnnxModel, OnnxDataType, type OnnxModel } from './onnx-proto.js';
import { type CrossEncoderModelSpec, padTokenIdOf, resolveCrossEncoderSpec, SPEED_SHAPE_NOTICE } from './model-spec.js';

export const ONNX_OPSET = 17;
/** IR version 8 pairs with opset 17 (ONNX 1.13); every onnxruntime since 1.14 reads it. */
export const ONNX_IR_VERSION = 8;
export const DEFAULT_MODEL_SEED = 42;

export interface BuildOnnxOptions {
  /** Unsigned 32-bit seed of the weights. */
  readonly seed?: number;
  /** Preset name recorded in the model's metadata (defaults to spec.name). */
  readonly preset?: string;
}

export function normalizeSeed(seed: number | undefined): number {
  const value = seed ?? DEFAULT_MODEL_SEED;
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffffffff) {
    throw new InvalidArgumentError(`seed must be an integer in [0, 4294967295], got ${String(seed)}`);
  }
  return value;
}

/** The encoder of a BERT-like graph: its inputs and the last hidden state [B, S, H]. */
export interface BertLikeEncoder {
  readonly input: GraphInputs;
  /** Name of the last hidden state value, [batch, sequence, hidden]. */
  readonly hidden: string;
  /** Parameter-name root: 'bert' or 'roberta'. */
  readonly root: 'bert' | 'roberta';
  readonly roberta: boolean;
}

/**
 * Embeddings and encoder layers of BERT and RoBERTa / XLM-RoBERTa (same encoder, different
 * positions): what both the classifier graph and an imported bi-encoder's pooling sit on.
 */
export function buildBertLikeEncoder(ctx: GraphContext): BertLikeEncoder {
  const { g, spec, h } = ctx;
  const roberta = spec.family === 'roberta' || spec.family === 'xlm-roberta';
  const root = roberta ? 'roberta' : 'bert';
  const input = ctx.inputs();

  // ---- embeddings ---------------------------------------------------------------------------
  const emb = `/${root}/embeddings`;
  const wordTable = ctx.normal(`${root}.embeddings.word_embeddings.weight`, [spec.vocabSize, h], ctx.embeddingStd);
  const positionTable = ctx.normal(
    `${root}.embeddings.position_embeddings.weight`,
    [spec.maxPositionEmbeddings, h],
    ctx.embeddingStd,
  );
  const typeTable = ctx.normal(
    `${root}.embeddings.token_type_embeddings.weight`,
    [spec.typeVocabSize, h],
    ctx.embeddingStd,
  );

  const words = g.op(emb, 'Gather', [wordTable, input.ids], { axis: { int: 0 } });
  let positions: string;
  if (input.positionIds !== null) {
    positions = g.op(emb, 'Gather', [positionTable, input.positionIds], { axis: { int: 0 } }); // [B,S,H]
  } else if (roberta) {
    // transformers' create_position_ids_from_input_ids: padding_idx + cumsum(ids ≠ pad) · (ids ≠ pad).
    const pad = ctx.ints('const_padding_idx', [], [padTokenIdOf(spec)]);
    const notPad = g.op(emb, 'Cast', [g.op(emb, 'Not', [g.op(emb, 'Equal', [input.ids, pad])])], {
      to: { int: OnnxDataType.INT64 },
    });
    const cumulative = g.op(emb, 'CumSum', [notPad, ctx.ints('const_axis_1', [], [1])]);
    const positionIds = g.op(emb, 'Add', [g.op(emb, 'Mul', [cumulative, notPad]), pad]);
    positions = g.op(emb, 'Gather', [positionTable, positionIds], { axis: { int: 0 } });
  } else {
    // Positions 0..S-1: slice the table to the sequence length ([S, H], broadcast over the batch).
    const seqLen = ctx.sequenceLength(emb, input.idsInput);
    const zero1d = ctx.ints('const_zero_1d', [1], [0]);
    positions = g.op(emb, 'Slice', [positionTable, zero1d, seqLen, zero1d]);
  }
  let types: string;
  if (input.tokenTypes !== null) {
    types = g.op(emb, 'Gather', [typeTable, input.tokenTypes], { axis: { int: 0 } });
  } else {
    // No token_type_ids input: every token is type 0, as transformers does when it is omitted.
    types = g.op(emb, 'Gather', [typeTable, ctx.ints('const_zero_scalar', [], [0])], { axis: { int: 0 } });
  }
  const embSum = g.op(emb, 'Add', [g.op(emb, 'Add', [words, positions]), types]);
  let hidden = ctx.layerNorm(emb, `${root}.embeddings.LayerNorm`, embSum);

  const additiveMask = ctx.additiveMask(`/${root}/extended_attention_mask`, input.mask);
  const headDim = h / spec.numHeads;

  // ---- encoder layers -----------------------------------------------------------------------
  for (let layer = 0; layer < spec.numLayers; layer++) {
    const scope = `/${root}/encoder/layer.${layer}`;
    const param = `${root}.encoder.layer.${layer}`;
    const att = `${scope}/attention/self`;
    const q = ctx.splitHeads(att, ctx.linear(`${att}/query`, `${param}.attention.self.query`, hidden, h, h));
    const kT = ctx.splitHeads(att, ctx.linear(`${att}/key`, `${param}.attention.self.key`, hidden, h, h), [0, 2, 3, 1]);
    const v = ctx.splitHeads(att, ctx.linear(`${att}/value`, `${param}.attention.self.value`, hidden, h, h));
    const merged = ctx.attention(att, q, kT, v, additiveMask, Math.sqrt(headDim));

    const attOut = ctx.linear(`${scope}/attention/output/dense`, `${param}.attention.output.dense`, merged, h, h);
    const attResidual = g.op(`${scope}/attention/output`, 'Add', [attOut, hidden]);
    const afterAttention = ctx.layerNorm(
      `${scope}/attention/output`,
      `${param}.attention.output.LayerNorm`,
      attResidual,
    );

    const ffnScope = `${scope}/intermediate`;
    const inner = ctx.linear(
      `${ffnScope}/dense`,
      `${param}.intermediate.dense`,
      afterAttention,
      h,
      spec.intermediateSize,
    );
    const gelu = ctx.gelu(ffnScope, inner);
    const ffnOut = ctx.linear(`${scope}/output/dense`, `${param}.output.dense`, gelu, spec.intermediateSize, h);
    const ffnResidual = g.op(`${scope}/output`, 'Add', [ffnOut, afterAttention]);
    hidden = ctx.layerNorm(`${scope}/output`, `${param}.output.LayerNorm`, ffnResidual);
  }
  return { input, hidden, root, roberta };
}

/** BERT and RoBERTa / XLM-RoBERTa: same encoder, different positions and head. */
export function buildBertLikeBody(ctx: GraphContext): FamilyBody {
  const { g, h } = ctx;
  const { input, hidden, root, roberta } = buildBertLikeEncoder(ctx);

  // ---- head ---------------------------------------------------------------------------------
  const firstToken = ctx.firstToken(roberta ? '/classifier' : `/${root}/pooler`, hidden); // [B,H]
  const pooled = roberta
    ? g.op('/classifier', 'Tanh', [ctx.linear('/classifier/dense', 'classifier.dense', firstToken, h, h)])
    : g.op(`/${root}/pooler`, 'Tanh', [ctx.linear(`/${root}/pooler/dense`, `${root}.pooler.dense`, firstToken, h, h)]);
  const outputs = ctx.classifierOutputs(
    pooled,
    (head, single) =>
      roberta
        ? single
          ? 'classifier.out_proj'
          : `classifier.out_proj.${head}`
        : single
          ? 'classifier'
          : `classifier.${head}`,
    input.ignoredZero,
  );
  return { inputs: input.declared, outputs };
}

/** Builds the ModelProto (plain object; large initializers hold views of freshly drawn arrays). */
export function buildCrossEncoderModelProto(
  unvalidated: CrossEncoderModelSpec,
  options: BuildOnnxOptions = {},
): OnnxModel {
  const spec = resolveCrossEncoderSpec(unvalidated);
  const seed = normalizeSeed(options.seed);
  const ctx = new GraphContext(spec, seed);
  const family = spec.family ?? 'bert';
  const body =
    family === 'modernbert'
      ? buildModernBertBody(ctx)
      : family === 'deberta-v2'
        ? buildDebertaBody(ctx)
        : buildBertLikeBody(ctx);

  const notice = `${spec.name}: ${spec.description}. speed/shape model: random weights, scores mean nothing (${SPEED_SHAPE_NOTICE}); seed ${seed}.`;
  return {
    ir_version: ONNX_IR_VERSION,
    opset_import: [{ domain: '', version: ONNX_OPSET }],
    producer_name: 'relevance-gate model-gen',
    producer_version: '1',
    doc_string: notice,
    graph: {
      name: `relevance_gate_${spec.name.replace(/[^A-Za-z0-9_]/g, '_')}_speed_shape_model`,
      doc_string: notice,
      node: ctx.g.nodes,
      initializer: ctx.g.initializers,
      input: body.inputs,
      output: body.outputs,
    },
    metadata_props: [
      { key: 'relevance_gate.kind', value: SPEED_SHAPE_NOTICE },
      { key: 'relevance_gate.preset', value: options.preset ?? spec.name },
      { key: 'relevance_gate.seed', value: String(seed) },
      { key: 'relevance_gate.family', value: family },
    ],
  };
}

/** Serialized ONNX bytes of the spec's model. Same spec and seed → byte-identical output. */
export function buildCrossEncoderOnnx(spec: CrossEncoderModelSpec, options: BuildOnnxOptions = {}): Uint8Array {
  return encodeOnnxModel(buildCrossEncoderModelProto(spec, options));
}
